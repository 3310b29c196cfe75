package report

import (
	"encoding/json"
	"io"

	"github.com/idemlint/idemlint/checks"
)

// JSON is the machine format. Its shape is stable (documented in README):
//
//	{"findings": [{"rule", "severity", "file", "line", "column", "pointer",
//	  "message", "chain"?, "related"?}], "summary": {"files", "errors",
//	  "warnings", "unreadable", "not_boundary"}}
type JSON struct{}

type jsonReport struct {
	Findings []checks.Finding `json:"findings"`
	Summary  jsonSummary      `json:"summary"`
}

type jsonSummary struct {
	Files       int `json:"files"`
	Errors      int `json:"errors"`
	Warnings    int `json:"warnings"`
	Unreadable  int `json:"unreadable"`
	NotBoundary int `json:"not_boundary"`
}

// Format implements Formatter.
func (JSON) Format(w io.Writer, r *Report) error {
	out := jsonReport{Findings: r.Findings, Summary: jsonSummary{Files: r.Files, Unreadable: r.Unreadable, NotBoundary: r.NotBoundary}}
	if out.Findings == nil {
		out.Findings = []checks.Finding{}
	}
	out.Summary.Errors, out.Summary.Warnings = checks.Count(r.Findings)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
