package checks

// Verdict says whether the findings a run reports fail it (--fail-on,
// --max-warnings): the last stage after the rules.
type Verdict struct {
	Failed bool
	// Warnings counts the warnings reported. TooManyWarnings says they
	// are more than Options.MaxWarnings allows, which fails the run
	// though no finding shows it: the caller says so.
	Warnings        int
	TooManyWarnings bool
}

// judge is the verdict on the findings reported: any at or above failOn
// (Error when unset) fails the run, and so do more warnings than
// maxWarnings (nil: no limit).
func judge(findings []Finding, failOn Severity, maxWarnings *int) Verdict {
	errs, warns := Count(findings)
	v := Verdict{Warnings: warns, Failed: errs > 0 || (failOn == Warning && warns > 0)}
	if maxWarnings != nil && warns > *maxWarnings {
		v.TooManyWarnings, v.Failed = true, true
	}
	return v
}
