package baseline

import (
	"fmt"
	"io"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/report"
)

// Stage is the baseline stage of a run (checks.Options.Baseline):
// --baseline FILE hides the findings FILE records; --write-baseline FILE
// first records every finding in it, so that it hides them all. What it
// did is said once the run is over (Finish), because no finding shows it.
type Stage struct {
	base  *Baseline
	write bool

	recorded int
	outcome  Outcome
}

// NewStage returns the stage that hides the findings the baseline at path
// records or, with write, records them all in a new baseline at path.
func NewStage(path string, write bool) (*Stage, error) {
	open := Load
	if write {
		open = New
	}
	base, err := open(path)
	if err != nil {
		return nil, err
	}
	return &Stage{base: base, write: write}, nil
}

// Process returns the findings the baseline does not hold.
func (s *Stage) Process(findings []checks.Finding, _ *checks.Result) []checks.Finding {
	if s.write {
		s.base.Record(findings)
		s.recorded = len(findings)
	}
	s.outcome = s.base.Filter(findings)
	return s.outcome.New
}

// Finish saves a recorded baseline and says on w what the stage did.
func (s *Stage) Finish(w io.Writer) error {
	if s.write {
		if err := s.base.Save(); err != nil {
			return err
		}
		fmt.Fprintf(w, "idemlint: recorded %s in baseline %s\n", report.Plural(s.recorded, "finding"), s.base.Path)
	}
	fmt.Fprintf(w, "idemlint: baseline %s hid %s", s.base.Path, report.Plural(s.outcome.Hidden, "finding"))
	if s.outcome.Stale > 0 {
		verb := "occur"
		if s.outcome.Stale == 1 {
			verb = "occurs"
		}
		fmt.Fprintf(w, "; %s no longer %s (prune with --write-baseline %s)", report.Plural(s.outcome.Stale, "entry"), verb, s.base.Path)
	}
	fmt.Fprintln(w)
	return nil
}
