package report

import (
	"bufio"
	"io"

	"github.com/idemlint/idemlint/checks"
)

// JSON is the machine format. Its shape is stable (documented in docs/check.md, Output formats):
//
//	{"findings": [{"rule", "severity", "file", "line", "column", "pointer",
//	  "message", "chain"?, "related"?}], "summary": {"files", "errors",
//	  "warnings", "unreadable", "not_boundary"}}
//
// It is written a finding at a time, indented by two spaces as
// encoding/json indents a whole document.
type JSON struct{}

type jsonSummary struct {
	Files       int `json:"files"`
	Errors      int `json:"errors"`
	Warnings    int `json:"warnings"`
	Unreadable  int `json:"unreadable"`
	NotBoundary int `json:"not_boundary"`
}

// Format implements Formatter.
func (JSON) Format(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	sum := jsonSummary{Files: r.Files, Unreadable: r.Unreadable, NotBoundary: r.NotBoundary}
	sum.Errors, sum.Warnings = checks.Count(r.Findings)
	bw.WriteString("{\n  \"findings\": ")
	err := newJSONAt(bw, 2).items(len(r.Findings), func(i int) (any, error) { return &r.Findings[i], nil })
	if err != nil {
		return err
	}
	bw.WriteString(",\n  \"summary\": ")
	if err := newJSONAt(bw, 1).value(sum); err != nil {
		return err
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}
