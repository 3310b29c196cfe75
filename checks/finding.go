package checks

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/idemlint/idemlint/checks/chain"
	"slices"
	"strings"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// Finding is one problem found in a boundary set. Formatters read only this.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line"`   // 1-based; 0 when the file has no position (unreadable)
	Column   int      `json:"column"` // 1-based, in Unicode code points
	Pointer  string   `json:"pointer"`
	Message  string   `json:"message"`
	// Chain names the chain a cross-document finding broke, e.g.
	// "orders.create: web -> checkout-bff -> edge-gw -> orders-adapter".
	Chain string `json:"chain,omitempty"`
	// Related are other places that share the finding's root cause, such
	// as the per-document finding behind a cross-document one
	// (docs/rules.md, Rules are independent).
	Related []Location `json:"related,omitempty"`
}

// Location is a place related to a finding, and why.
type Location struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// Relate adds the value at `at` of doc as a related location, with
// message saying how it relates.
func (f *Finding) Relate(doc *chain.Facts, at boundary.Pos, message string) {
	pl := doc.Place(at)
	f.Related = append(f.Related, Location{File: doc.Path, Line: pl.Line, Column: pl.Column, Pointer: pl.Pointer, Message: message})
}

// String writes f on one line, as the text format does without colour:
// "file:line:column: severity RULE message" (no position for a file that
// could not be read).
func (f Finding) String() string {
	loc := f.File
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Column)
	}
	return fmt.Sprintf("%s: %s %s %s", loc, f.Severity, f.Rule, f.Message)
}

// SortFindings orders findings by file, position, rule and message, so
// output is the same on every run whatever the worker scheduling.
func SortFindings(fs []Finding) {
	slices.SortFunc(fs, compareFindings)
}

// compareFindings is the order of SortFindings. It compares no further
// than it must (cmp.Or would compare every field first, messages too) and
// each string once (cmp.Compare compares twice strings that differ):
// thousands of findings sort on the path of a run's output.
func compareFindings(a, b Finding) int {
	if c := strings.Compare(a.File, b.File); c != 0 {
		return c
	}
	if a.Line != b.Line {
		return cmp.Compare(a.Line, b.Line)
	}
	if a.Column != b.Column {
		return cmp.Compare(a.Column, b.Column)
	}
	if c := strings.Compare(a.Rule, b.Rule); c != 0 {
		return c
	}
	if c := strings.Compare(a.Message, b.Message); c != 0 {
		return c
	}
	return strings.Compare(a.Chain, b.Chain)
}

// Count returns how many findings have each severity.
func Count(fs []Finding) (errors, warnings int) {
	for _, f := range fs {
		if f.Severity == Error {
			errors++
		} else {
			warnings++
		}
	}
	return errors, warnings
}

// Fingerprint identifies a finding across runs by what it is about rather
// than where it is: a hash of its rule, file (as the caller names it), JSON
// Pointer and chain. SARIF's partialFingerprints and baselines use it, so
// an entry survives edits that only move lines.
func Fingerprint(rule, file, pointer, chain string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{rule, file, pointer, chain}, "\x00")))
	return hex.EncodeToString(sum[:16])
}
