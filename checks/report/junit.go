package report

import (
	"fmt"
	"io"
	"slices"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/report/junitxml"
)

// JUnit writes JUnit XML, which CI systems (GitLab, Jenkins, Azure
// Pipelines, CircleCI) show as test results: one testsuite per file, one
// testcase per finding, named by rule and JSON Pointer so its identity
// survives edits that move lines, and one passing testcase for a file
// without findings, so every checked file is listed.
//
// A finding at or above Report.FailOn is a <failure>; one below it (a
// warning, by default) is a passing testcase whose <system-out> carries the
// finding, so the test results agree with the exit status.
type JUnit struct{}

// passingCase names the testcase of a file without findings.
const passingCase = "no findings"

// Format implements Formatter.
func (JUnit) Format(w io.Writer, r *Report) error {
	failOn := r.FailOn
	if failOn == 0 {
		failOn = checks.Error
	}
	byFile := map[string][]checks.Finding{}
	files := slices.Clone(r.Paths)
	for _, f := range r.Findings {
		byFile[f.File] = append(byFile[f.File], f)
		files = append(files, f.File)
	}
	slices.Sort(files)
	files = slices.Compact(files)

	out := junitxml.Suites{Name: "idemlint"}
	for _, file := range files {
		s := junitxml.Suite{Name: file}
		for _, f := range byFile[file] {
			c := junitxml.Case{ClassName: file, Name: f.Rule + " " + pointerName(f.Pointer)}
			line := textLine(f)
			if f.Severity >= failOn {
				c.Failure = &junitxml.Failure{Message: f.Message, Type: f.Severity.String(), Text: line}
				s.Failures++
			} else {
				c.SystemOut = line
			}
			s.Cases = append(s.Cases, c)
		}
		if len(s.Cases) == 0 {
			s.Cases = []junitxml.Case{{ClassName: file, Name: passingCase}}
		}
		s.Tests = len(s.Cases)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, s)
	}

	return junitxml.Write(w, out)
}

// pointerName shows a JSON Pointer in a testcase name; the root is "/".
func pointerName(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

// textLine is a finding as the text format prints it.
func textLine(f checks.Finding) string {
	return fmt.Sprintf("%s: %s %s %s", location(f), f.Severity, f.Rule, f.Message)
}
