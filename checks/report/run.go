package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/idemlint/idemlint/checks"
)

// SelectOutputs returns the outputs of a check: format on standard output
// first, when it was given (formatSet) or no spec was, then the --output
// specs (see ParseOutputs). An unknown format is named as --format's.
func SelectOutputs(format string, formatSet bool, specs []string, o Options) ([]Output, error) {
	if len(specs) == 0 || formatSet {
		if _, err := New(format, o); err != nil {
			return nil, err
		}
		specs = append([]string{format}, specs...)
	}
	return ParseOutputs(specs, o)
}

// Of is the report of a check run's result: its findings, the files it
// examined, the rules it applied, and version and failOn as the formats
// show them.
func Of(res *checks.Result, rules checks.Rules, version string, failOn checks.Severity) *Report {
	r := &Report{Findings: res.Findings, Files: res.Files, Unreadable: res.Unreadable, NotBoundary: res.NotBoundary,
		Rules: rules.Sorted(), Version: version, FailOn: failOn}
	for _, d := range res.Facts {
		r.Paths = append(r.Paths, d.Path)
	}
	return r
}

// NotRun says on w which rules did not run and why (check --verbose), the
// rules that share a reason on one line.
func NotRun(w io.Writer, notRun []checks.NotRun) {
	for i := 0; i < len(notRun); {
		j := i + 1
		for j < len(notRun) && notRun[j].Reason == notRun[i].Reason {
			j++
		}
		ids := make([]string, 0, j-i)
		for _, n := range notRun[i:j] {
			ids = append(ids, n.Rule)
		}
		fmt.Fprintf(w, "idemlint: %s did not run: %s\n", strings.Join(ids, ", "), notRun[i].Reason)
		i = j
	}
}
