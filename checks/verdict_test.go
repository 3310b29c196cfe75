package checks_test

import (
	"testing"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/lint"
)

// The verdict is the last stage: it judges the findings every stage
// before it left, at the levels the configuration gave them.
func TestVerdictJudgesWhatTheStagesLeft(t *testing.T) {
	dir := fixtureSet(t, "rules/IDL208/three-hops-of-three")
	plain, err := checks.CheckPaths([]string{dir}, lint.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	errs, warns := checks.Count(plain.Findings)
	if want := (checks.Verdict{Failed: errs > 0, Warnings: warns}); len(plain.Findings) == 0 || plain.Verdict != want {
		t.Fatalf("fixture: %d findings, verdict %+v; want findings and %+v", len(plain.Findings), plain.Verdict, want)
	}
	// Every rule that fired, as a warning.
	asWarnings := map[string]checks.Severity{}
	for _, f := range plain.Findings {
		asWarnings[f.Rule] = checks.Warning
	}
	n := len(plain.Findings)
	limit := func(n int) *int { return &n }
	tests := []struct {
		name string
		opts func(*checks.Options)
		want checks.Verdict
	}{
		{"warnings pass", func(o *checks.Options) {}, checks.Verdict{Warnings: n}},
		{"fail on warnings", func(o *checks.Options) { o.FailOn = checks.Warning }, checks.Verdict{Failed: true, Warnings: n}},
		{"at the warning limit", func(o *checks.Options) { o.MaxWarnings = limit(n) }, checks.Verdict{Warnings: n}},
		{"over the warning limit", func(o *checks.Options) { o.MaxWarnings = limit(n - 1) },
			checks.Verdict{Failed: true, Warnings: n, TooManyWarnings: true}},
		{"after the baseline", func(o *checks.Options) {
			o.FailOn = checks.Warning
			o.Baseline = hideAll
		}, checks.Verdict{}},
		{"an input's finding, which no baseline hides", func(o *checks.Options) {
			o.Baseline = hideAll
			o.Inputs = []checks.Supplied{unreadInput.Supply(unreadFile{})}
		}, checks.Verdict{Failed: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := lint.DefaultOptions()
			opts.Severity = asWarnings
			tt.opts(&opts)
			res, err := checks.CheckPaths([]string{dir}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tt.want {
				t.Errorf("verdict %+v, want %+v", res.Verdict, tt.want)
			}
		})
	}
}

// stageFunc is a stage written as a function.
type stageFunc func([]checks.Finding, *checks.Result) []checks.Finding

func (f stageFunc) Process(fs []checks.Finding, res *checks.Result) []checks.Finding {
	return f(fs, res)
}

// hideAll is a baseline that records every finding.
var hideAll = stageFunc(func([]checks.Finding, *checks.Result) []checks.Finding { return nil })

// unreadFile is a supplied input with a file that could not be read, as
// an as-built configuration's may be (checks.PendingInput).
type unreadFile struct{}

func (unreadFile) Findings() ([]checks.Finding, int) {
	return []checks.Finding{{Rule: "IDL001", Severity: checks.Error, File: "gateway.yaml", Line: 1, Column: 1}}, 1
}

var unreadInput = &checks.InputOf[unreadFile]{Name: "unread input"}
