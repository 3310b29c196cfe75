package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

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

// Format implements Formatter. Findings come sorted (by file first), so
// each file's suite is made from its run of findings as it is written.
func (JUnit) Format(w io.Writer, r *Report) error {
	failOn := r.FailOn
	if failOn == 0 {
		failOn = checks.Error
	}
	findings := r.Findings
	if !slices.IsSortedFunc(findings, byFile) {
		findings = slices.Clone(findings)
		slices.SortStableFunc(findings, byFile)
	}
	files := slices.Clone(r.Paths)
	for _, f := range findings {
		if len(files) == 0 || files[len(files)-1] != f.File {
			files = append(files, f.File)
		}
	}
	slices.Sort(files)
	files = slices.Compact(files)

	head := junitxml.Suites{Name: "idemlint", Tests: len(files)}
	for i, f := range findings {
		if i > 0 && findings[i-1].File == f.File {
			head.Tests++ // a file's first finding takes its passing case's place
		}
		if f.Severity >= failOn {
			head.Failures++
		}
	}
	next := 0 // the first finding not written yet
	return junitxml.WriteEach(w, head, len(files), func(i int) junitxml.Suite {
		file := files[i]
		s := junitxml.Suite{Name: file}
		for ; next < len(findings) && findings[next].File == file; next++ {
			f := findings[next]
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
		return s
	})
}

// byFile orders findings by file alone, as a report's suites are.
func byFile(a, b checks.Finding) int { return strings.Compare(a.File, b.File) }

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
