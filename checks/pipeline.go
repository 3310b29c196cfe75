package checks

import (
	"io"
	"slices"
)

// A Stage is one step of what follows the rules of a run: it takes the
// findings the stage before it passed on and returns those it passes on,
// as golangci-lint's processors do. Every stage of a run is listed, in
// order, in one place (the run's stages, in pipeline.go); a caller's stage
// takes the place its option names there (Options.Baseline,
// Options.NewFromRev).
type Stage interface {
	// Process returns the findings the stage passes on, given those the
	// stage before it passed on (in output order from the sort stage on)
	// and what the run read (res: its Facts, NotRun).
	Process(findings []Finding, res *Result) []Finding
}

// A Finisher is a stage with something to do once its caller has judged
// the run (Result.Finish): save what it recorded, say what it hid, which
// no finding shows.
type Finisher interface {
	Finish(notes io.Writer) error
}

// stages are the stages after the rules, in the order they run: this list
// and nowhere else says it (as golangci-lint's runner lists its
// processors).
func (r *run) stages() []Stage {
	stages := []Stage{
		// Findings of the rules that did not run, such as IDL002 when the
		// configuration turns it off (its findings come with the document).
		dropNotRun{r},
		// The documents' suppressions hide findings; the malformed and the
		// unused ones are IDL003's findings.
		applySuppressions{r},
		// The configuration's levels, after the suppressions so that they
		// cover IDL003's findings too.
		applyLevels(r.opts.Severity),
		// The findings a misspelt member explains, folded into IDL002's
		// "did you mean" at it; after the suppressions and levels, so
		// only a finding the run keeps folds others.
		foldMisspelt{},
		// In output order, whatever the workers' scheduling: the stages
		// below keep it, and which of two findings of one identity a
		// baseline hides depends on it.
		sortOutput{},
		// A baseline hides the findings it records, or records them all
		// (--baseline, --write-baseline: checks/internal/baseline).
		r.opts.Baseline,
		// Only the findings a change touched (--new-from-rev:
		// checks/internal/changed), which needs the documents to follow chains.
		r.opts.NewFromRev,
		// The inputs' own findings (an as-built file that cannot be
		// read), which no stage above narrows, in output order.
		addInputFindings{r},
		// Related locations between findings that share a cause, after
		// every stage that drops findings: only a finding that survived
		// them is linked to.
		linkRelated{r},
		// The verdict (--fail-on, --max-warnings), on what the user sees.
		judgeVerdict{r.opts},
	}
	return slices.DeleteFunc(stages, func(s Stage) bool { return s == nil })
}

// afterRules takes the findings of res through the stages after the rules.
func (r *run) afterRules(res *Result) {
	res.stages = r.stages()
	for _, s := range res.stages {
		res.Findings = s.Process(res.Findings, res)
	}
}

// Finish lets each stage of the run that has something to do once the
// run is over do it, in order, saying on notes what it did: a caller
// finishes a run it has judged (a check that found no boundary document
// records no baseline). It stops at the first error.
func (res *Result) Finish(notes io.Writer) error {
	for _, s := range res.stages {
		if f, ok := s.(Finisher); ok {
			if err := f.Finish(notes); err != nil {
				return err
			}
		}
	}
	return nil
}

// skips reports whether the findings of rule go unreported because it did
// not run: turned off, or not run for want of an input (Result.NotRun).
// Its suppressions are not called unused either.
func (r *run) skips(rule string, res *Result) bool {
	return r.opts.Disabled[rule] || slices.ContainsFunc(res.NotRun, func(n NotRun) bool { return n.Rule == rule })
}

type dropNotRun struct{ run *run }

func (s dropNotRun) Process(fs []Finding, res *Result) []Finding {
	return slices.DeleteFunc(fs, func(f Finding) bool { return s.run.skips(f.Rule, res) })
}

type applySuppressions struct{ run *run }

func (s applySuppressions) Process(fs []Finding, res *Result) []Finding {
	return s.run.suppressions.apply(fs, func(rule string) bool { return s.run.skips(rule, res) })
}

// applyLevels are the configuration's levels, by rule.
type applyLevels map[string]Severity

func (levels applyLevels) Process(fs []Finding, _ *Result) []Finding {
	for i := range fs {
		if sev, ok := levels[fs[i].Rule]; ok {
			fs[i].Severity = sev
		}
	}
	return fs
}

type foldMisspelt struct{}

func (foldMisspelt) Process(fs []Finding, res *Result) []Finding { return foldTypos(fs, res.Facts) }

type sortOutput struct{}

func (sortOutput) Process(fs []Finding, _ *Result) []Finding {
	SortFindings(fs)
	return fs
}

type addInputFindings struct{ run *run }

func (s addInputFindings) Process(fs []Finding, _ *Result) []Finding {
	if len(s.run.inputFindings) == 0 {
		return fs
	}
	fs = append(fs, s.run.inputFindings...)
	SortFindings(fs)
	return fs
}

type linkRelated struct{ run *run }

func (s linkRelated) Process(fs []Finding, _ *Result) []Finding {
	return linkOverlaps(fs, s.run.overlaps)
}

type judgeVerdict struct{ opts *Options }

func (s judgeVerdict) Process(fs []Finding, res *Result) []Finding {
	res.Verdict = judge(fs, s.opts.FailOn, s.opts.MaxWarnings)
	return fs
}
