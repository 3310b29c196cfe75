package changed

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/report"
)

// Stage is the --new-from-rev stage of a run (checks.Options.NewFromRev):
// it keeps the findings a change since a revision touched. How many it
// hid is said once the run is over (Finish), because no finding shows it.
type Stage struct {
	changed Set
	rev     string
	hidden  int
}

// NewStage returns the stage keeping the findings of the files changed
// since rev in the git work tree holding start (the first checked path).
func NewStage(start, rev string) (*Stage, error) {
	dir := start
	if info, err := os.Stat(start); err != nil || !info.IsDir() {
		dir = filepath.Dir(start)
	}
	set, err := Since(dir, rev)
	if err != nil {
		return nil, err
	}
	return &Stage{changed: set, rev: rev}, nil
}

// Process keeps the findings of the changed files and of the chains
// through them, given the documents the run read (see the package's
// Filter).
func (s *Stage) Process(findings []checks.Finding, res *checks.Result) []checks.Finding {
	kept := Filter(findings, res.Facts, s.changed)
	s.hidden = len(findings) - len(kept)
	return kept
}

// Finish says on w how many findings the stage hid.
func (s *Stage) Finish(w io.Writer) error {
	fmt.Fprintf(w, "idemlint: %s outside the files changed since %s not shown\n", report.Plural(s.hidden, "finding"), s.rev)
	return nil
}
