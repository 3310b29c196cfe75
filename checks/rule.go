// Package checks holds idemlint's rules and the runner that applies them to
// a boundary set. Like golang.org/x/tools/go/analysis, a rule is a value
// with an id, a doc, the inputs it requires and a function; each lives in
// its own file (idlNNN.go) and registers itself, so adding a rule is one
// file plus its fixtures.
//
// Rules that need more than the boundary documents live in sub-packages
// that register them the same way (Register) and define the inputs they
// require (Input): checks/openapi holds the OpenAPI rules (IDL301-IDL304)
// and the description they read. This package imports none of them, so
// what imports it (the reference engine) compiles no OpenAPI or YAML
// reader; a program that wants their rules imports the sub-package.
package checks

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/idemlint/idemlint/schemas/suggest"
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
	// Requires are the inputs a cross-document rule reads (InputOf.Of),
	// built once per run or set and shared by every rule that requires
	// them. When one cannot be built the rule does not run.
	Requires []Input
	// AcrossSets rules run once over the documents of every set rather
	// than once per set: the OpenAPI description is one contract,
	// whichever set carries each of its operations. They cannot require a
	// per-set input directly; a run-wide input may read every set's
	// (InputOf.EachSet).
	AcrossSets bool

	// Subject names what the rule's findings mark ("role"), for the
	// related location a finding of another rule that shares its cause
	// gets (SetPass.Overlap): "IDL105 reports this role too".
	Subject string
}

// CrossDocument reports whether the rule runs on the whole set.
func (r *Rule) CrossDocument() bool { return r.CheckSet != nil }

// Scope names what the rule looks at: "document", "cross-document", or the
// scope of an input it requires ("openapi": it runs only with one).
func (r *Rule) Scope() string {
	for _, in := range r.Requires {
		if scope := in.info().scope; scope != "" {
			return scope
		}
	}
	if r.CrossDocument() {
		return "cross-document"
	}
	return "document"
}

var (
	registry = map[string]*Rule{}
	sealed   atomic.Bool // Rules has been asked: the registry is complete
)

// Register adds a rule at init time, from this package (one file per
// rule) or from a sub-package that holds rules needing more than the
// boundary documents: a program runs a sub-package's rules by importing
// it. Ids are unique by construction of the file names, so a clash is a
// programming error, as is a rule that does not say how it runs.
func Register(r *Rule) *Rule {
	if sealed.Load() {
		panic("checks: rule " + r.ID + " registered after the rules were listed; register from a package-level variable")
	}
	if _, dup := registry[r.ID]; dup {
		panic("checks: rule registered twice: " + r.ID)
	}
	switch {
	case r.CheckDocument != nil && r.CheckSet != nil:
		panic("checks: rule " + r.ID + " is both per-document and cross-document")
	case r.CheckSet == nil && (len(r.Requires) > 0 || r.AcrossSets):
		panic("checks: rule " + r.ID + " requires inputs or runs across sets but is no cross-document rule")
	}
	for _, in := range r.Requires {
		if r.AcrossSets && in.info().perSet {
			panic("checks: rule " + r.ID + " runs across sets but requires the per-set " + in.info().name)
		}
	}
	registry[r.ID] = r
	return r
}

// Rules returns every rule sorted by id. The registry is complete once
// package initialisation ends, so the sorted list is built once.
func Rules() []*Rule { return sortedRules() }

var sortedRules = sync.OnceValue(func() []*Rule {
	sealed.Store(true)
	out := make([]*Rule, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
})

// RuleHint says what an id that names no rule may have meant: the rule
// ids it is a typo of ("did you mean \"IDL201\" or \"IDL210\"?"), else
// where the ids are listed. Lookup ignores case; the hint names the id as
// written.
func RuleHint(id string) string {
	near := NearRules(id)
	if len(near) == 0 {
		return `"idemlint rules" lists the rule ids`
	}
	quoted := make([]string, len(near))
	for i, n := range near {
		quoted[i] = strconv.Quote(n)
	}
	if len(quoted) == 1 {
		return "did you mean " + quoted[0] + "?"
	}
	return "did you mean " + strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1] + "?"
}

// NearRules returns the rule ids id may be a typo of, sorted; none when
// it names a rule as written.
func NearRules(id string) []string {
	// Rule ids differ in three digits: two edits reach most of them.
	return suggest.Within(id, RuleIDs(), 1)
}

// RuleIDs returns the ids of every rule, sorted.
func RuleIDs() []string {
	ids := make([]string, 0, len(Rules()))
	for _, r := range Rules() {
		ids = append(ids, r.ID)
	}
	return ids
}

// Lookup finds a rule by id (case-insensitive).
func Lookup(id string) (*Rule, bool) {
	r, ok := registry[strings.ToUpper(id)]
	return r, ok
}
