// Package checks holds idemlint's rules and the runner that applies them to
// a boundary set. Like golang.org/x/tools/go/analysis, a rule is a value
// with an id, a doc and a function; each lives in its own file (idlNNN.go)
// and registers itself, so adding a rule is one file plus its fixtures.
package checks

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Severity says whether a finding fails the check.
type Severity int8

// Severities, ordered so that a larger value is more severe.
const (
	Warning Severity = iota + 1
	Error
)

func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("Severity(%d)", int8(s))
}

// MarshalText writes the severity as "error" or "warning".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads "error" or "warning".
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err == nil {
		*s = v
	}
	return err
}

// ParseSeverity parses "error" or "warning".
func ParseSeverity(text string) (Severity, error) {
	switch text {
	case "error":
		return Error, nil
	case "warning":
		return Warning, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want error or warning)", text)
}

// Rule is one check.
type Rule struct {
	ID       string   // "IDL102"; never renamed, fixtures name it
	Name     string   // short slug, e.g. "key-header-allowlisted"
	Severity Severity // default severity of its findings
	Summary  string   // one line for the rule table
	Doc      string   // why it matters and how to fix it

	// Exactly one of these is set, unless the loader itself reports the
	// rule (IDL001), in which case neither is.
	CheckDocument func(*DocumentPass)
	CheckSet      func(*SetPass)
	// OpenAPI rules are set rules that hold the boundary sets to an API
	// description (Options.API). They run once over every set, and only
	// with a description.
	OpenAPI bool
}

// CrossDocument reports whether the rule runs on the whole set.
func (r *Rule) CrossDocument() bool { return r.CheckSet != nil }

var registry = map[string]*Rule{}

// register adds a rule at init time; ids are unique by construction of
// the file names, so a clash is a programming error.
func register(r *Rule) *Rule {
	if _, dup := registry[r.ID]; dup {
		panic("checks: rule registered twice: " + r.ID)
	}
	if r.CheckDocument != nil && r.CheckSet != nil {
		panic("checks: rule " + r.ID + " is both per-document and cross-document")
	}
	registry[r.ID] = r
	return r
}

// Rules returns every rule sorted by id. The registry is complete once
// package initialisation ends, so the sorted list is built once.
func Rules() []*Rule { return sortedRules() }

var sortedRules = sync.OnceValue(func() []*Rule {
	out := make([]*Rule, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
})

// Lookup finds a rule by id (case-insensitive).
func Lookup(id string) (*Rule, bool) {
	r, ok := registry[strings.ToUpper(id)]
	return r, ok
}
