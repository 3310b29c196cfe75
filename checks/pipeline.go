package checks

import "slices"

// afterRules takes the findings of a run through every stage that follows
// the rules, in the order listed here and nowhere else (as golangci-lint's
// runner lists its processors), and returns them sorted, with the
// verdict on what is left in res.
func afterRules(findings []Finding, res *Result, sup *suppressions, overlaps []overlap, opts *Options) []Finding {
	// A rule turned off, or not run for want of an input (Result.NotRun):
	// its findings go and its suppressions are not called unused.
	skips := func(rule string) bool {
		return opts.Disabled[rule] || slices.ContainsFunc(res.NotRun, func(n NotRun) bool { return n.Rule == rule })
	}
	stages := []func([]Finding) []Finding{
		// Findings of the rules that did not run, such as IDL002 when the
		// configuration turns it off (its findings come with the document).
		func(fs []Finding) []Finding {
			return slices.DeleteFunc(fs, func(f Finding) bool { return skips(f.Rule) })
		},
		// The documents' suppressions hide findings; the malformed and the
		// unused ones are IDL003's findings.
		func(fs []Finding) []Finding { return sup.apply(fs, skips) },
		// The configuration's levels, after the suppressions so that they
		// cover IDL003's findings too.
		func(fs []Finding) []Finding {
			for i := range fs {
				if sev, ok := opts.Severity[fs[i].Rule]; ok {
					fs[i].Severity = sev
				}
			}
			return fs
		},
		// The findings a misspelt member explains, folded into IDL002's
		// "did you mean" at it; after the suppressions and levels, so
		// only a finding the run keeps folds others.
		func(fs []Finding) []Finding { return foldTypos(fs, res.Facts) },
		// In output order, whatever the workers' scheduling: the stages
		// below keep it, and which of two findings of one identity a
		// baseline hides depends on it.
		func(fs []Finding) []Finding {
			SortFindings(fs)
			return fs
		},
		// A baseline hides the findings it records, or records them all
		// (--baseline, --write-baseline: checks/baseline).
		opts.Baseline,
		// Only the findings a change touched (--new-from-rev:
		// checks/changed), which needs the documents to follow chains.
		func(fs []Finding) []Finding {
			if opts.NewFromRev == nil {
				return fs
			}
			return opts.NewFromRev(fs, res.Facts)
		},
		// The inputs' own findings (an as-built file that cannot be
		// read), which no stage above narrows, in output order.
		func(fs []Finding) []Finding {
			if len(opts.InputFindings) == 0 {
				return fs
			}
			fs = append(fs, opts.InputFindings...)
			SortFindings(fs)
			return fs
		},
		// Related locations between findings that share a cause, after
		// every stage that drops findings: only a finding that survived
		// them is linked to.
		func(fs []Finding) []Finding { return linkOverlaps(fs, overlaps) },
		// The verdict (--fail-on, --max-warnings), on what the user sees.
		func(fs []Finding) []Finding {
			res.Verdict = judge(fs, opts.FailOn, opts.MaxWarnings)
			return fs
		},
	}
	for _, stage := range stages {
		if stage != nil {
			findings = stage(findings)
		}
	}
	return findings
}
