// Package checks holds idemlint's rules and the runner that applies them to
// a boundary set. Like golang.org/x/tools/go/analysis, a rule is a value
// with an id, a doc, the inputs it requires and a function; each lives in
// its own file (idlNNN.go) and is listed in Core, so adding a rule is one
// file, one line and its fixtures.
//
// Rules that need more than the boundary documents live in sub-packages
// that list them the same way and define the inputs they require (Input):
// checks/openapi holds the OpenAPI rules (IDL301-IDL304) and the
// description they read, checks/asbuilt the as-built rules. This package
// imports none of them, so what imports it (the reference engine) compiles
// no OpenAPI or YAML reader; a run applies the rules its caller lists
// (Options.Rules), as checks/lint composes every list for idemlint.
package checks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

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

// Rules is a list of rules: those a run applies (Options.Rules), as its
// caller composes them from the lists of the packages that hold them, the
// way multichecker.Main takes its analyzers. Ids are unique within it.
type Rules []*Rule

// Core are the rules of this package, which read nothing but the boundary
// documents, in id order. A rule is a file (idlNNN.go) and a line here.
var Core = Rules{
	IDL001, idl002, idl003,
	idl101, idl102, idl103, idl104, idl105, idl106, idl107, idl108, idl109, idl110, idl111, idl112, idl113,
	idl201, idl202, idl203, idl204, idl205, idl206, idl207, idl208, idl209, idl210, idl211, idl212, idl213, idl214,
}

// Sorted returns the rules sorted by id, after making sure each says how
// it runs and no two share an id: a list that breaks either is a
// programming error, so a run refuses it by panicking, as analysis.Validate
// refuses a malformed analyzer.
func (rs Rules) Sorted() Rules {
	if err := rs.validate(); err != nil {
		panic("checks: " + err.Error())
	}
	if slices.IsSortedFunc(rs, byID) {
		return rs
	}
	return slices.SortedFunc(slices.Values(rs), byID)
}

func byID(a, b *Rule) int { return strings.Compare(a.ID, b.ID) }

// validate reports the first rule of rs declared wrongly.
func (rs Rules) validate() error {
	seen := make(map[string]bool, len(rs))
	for _, r := range rs {
		if seen[r.ID] {
			return fmt.Errorf("rule %s listed twice", r.ID)
		}
		seen[r.ID] = true
		switch {
		case r.CheckDocument != nil && r.CheckSet != nil:
			return fmt.Errorf("rule %s is both per-document and cross-document", r.ID)
		case r.CheckSet == nil && (len(r.Requires) > 0 || r.AcrossSets):
			return fmt.Errorf("rule %s requires inputs or runs across sets but is no cross-document rule", r.ID)
		}
		for _, in := range r.Requires {
			if r.AcrossSets && in.info().perSet {
				return fmt.Errorf("rule %s runs across sets but requires the per-set %s", r.ID, in.info().name)
			}
		}
	}
	return nil
}

// Hint says what an id that names no rule of rs may have meant: the rule
// ids it is a typo of ("did you mean \"IDL201\" or \"IDL210\"?"), else
// where the ids are listed. Lookup ignores case; the hint names the id as
// written.
func (rs Rules) Hint(id string) string {
	near := rs.Near(id)
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

// Near returns the ids of rs that id may be a typo of, sorted; none when
// it names a rule as written.
func (rs Rules) Near(id string) []string {
	// Rule ids differ in three digits: two edits reach most of them.
	return suggest.Within(id, rs.IDs(), 1)
}

// IDs returns the ids of rs, sorted.
func (rs Rules) IDs() []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	slices.Sort(ids)
	return ids
}

// Lookup finds a rule of rs by id (case-insensitive).
func (rs Rules) Lookup(id string) (*Rule, bool) {
	id = strings.ToUpper(id)
	i := slices.IndexFunc(rs, func(r *Rule) bool { return r.ID == id })
	if i < 0 {
		return nil, false
	}
	return rs[i], true
}
