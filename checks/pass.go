package checks

import (
	"fmt"
	"time"

	"github.com/idemlint/idemlint/checks/boundary"
	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/checks/jsontree"
	"github.com/idemlint/idemlint/schemas"
)

// Options are the tunable limits of the rules.
type Options struct {
	// MaxRetryAmplification is IDL208's limit on the product of
	// max_attempts along a chain.
	MaxRetryAmplification int
	// MinTTL is IDL111's minimum retention per storage tier.
	MinTTL map[string]time.Duration

	// Disabled rules are not run and their findings are dropped ("off" in
	// the project configuration, which refuses to disable IDL001).
	Disabled map[string]bool
	// Severity replaces the severity of every finding of a rule.
	Severity map[string]Severity
	// Ignore, when set, reports whether a collected file (or an unreadable
	// path) is left out of the set.
	Ignore func(path string) bool

	// validator validates the schemas of one set, each repeated section
	// once; CheckFiles makes one per run.
	validator *schemas.Validator
}

// schemaValidator returns the set's validator, or a fresh one when the
// document is checked on its own.
func (o *Options) schemaValidator() *schemas.Validator {
	if o.validator == nil {
		return schemas.NewValidator()
	}
	return o.validator
}

// DefaultOptions returns the limits the spec states.
func DefaultOptions() Options {
	return Options{
		MaxRetryAmplification: 10,
		MinTTL: map[string]time.Duration{
			"default":      24 * time.Hour,
			"billing":      7 * 24 * time.Hour,
			"irreversible": 7 * 24 * time.Hour,
		},
	}
}

// DocumentPass is what a per-document rule receives.
type DocumentPass struct {
	Rule    *Rule
	Doc     *boundary.Document
	Options *Options

	findings *[]Finding
}

// Report reports n at the rule's severity.
func (p *DocumentPass) Report(n *jsontree.Node, format string, args ...any) {
	*p.findings = append(*p.findings, newFinding(p.Rule, p.Rule.Severity, p.Doc, n, n.Pointer(), format, args))
}

// Warn reports n as a warning whatever the rule's severity: the spec makes
// some variants of an error rule (e.g. raw_bytes under IDL106) warnings.
func (p *DocumentPass) Warn(n *jsontree.Node, format string, args ...any) {
	*p.findings = append(*p.findings, newFinding(p.Rule, Warning, p.Doc, n, n.Pointer(), format, args))
}

// Missing reports that obj lacks field: the position is obj's, the pointer
// is where the field belongs. A field that is present with the wrong type
// decodes as absent, but IDL002 already reports it, so Missing stays
// silent then.
func (p *DocumentPass) Missing(obj *jsontree.Node, field string, format string, args ...any) {
	if obj.Get(field) != nil {
		return
	}
	ptr := obj.Pointer() + "/" + jsontree.EscapePointer(field)
	*p.findings = append(*p.findings, newFinding(p.Rule, p.Rule.Severity, p.Doc, obj, ptr, format, args))
}

// SetPass is what a cross-document rule receives. The documents of a
// checked set have released their parse trees (see boundary.Release), so a
// cross-document finding names its place by JSON Pointer; the runner
// places it once every rule has run, re-parsing only the files concerned.
type SetPass struct {
	Rule    *Rule
	Docs    []*boundary.Document // every parsed document, sorted by path
	Graph   *chain.Graph         // Docs linked into chains, built once for every rule
	Options *Options

	findings *[]Finding
	unplaced *[]unplaced
}

// unplaced is a cross-document finding waiting for its line and column.
type unplaced struct {
	finding int // index in the pass's findings
	doc     *boundary.Document
}

// Report reports, at the rule's severity, the value at pointer in doc, or
// where a missing value belongs: its line and column are those of the
// deepest value on the pointer's path, the enclosing object of a missing
// field. chain names the chain the finding broke ("" for none).
func (p *SetPass) Report(doc *boundary.Document, pointer, chain string, format string, args ...any) {
	f := Finding{Rule: p.Rule.ID, Severity: p.Rule.Severity, File: doc.Path, Pointer: pointer, Chain: chain, Message: message(chain, format, args)}
	*p.unplaced = append(*p.unplaced, unplaced{len(*p.findings), doc})
	*p.findings = append(*p.findings, f)
}

// newFinding is a finding of a per-document rule, placed at node n.
func newFinding(r *Rule, sev Severity, doc *boundary.Document, n *jsontree.Node, ptr, format string, args []any) Finding {
	f := Finding{Rule: r.ID, Severity: sev, File: doc.Path, Pointer: ptr, Message: message("", format, args)}
	f.Line, f.Column = doc.Position.At(n.Offset)
	return f
}

// message is a finding's text: format applied to args (format as is
// without args, so a message may contain '%'), after the chain it broke.
func message(chain, format string, args []any) string {
	text := format
	if len(args) > 0 {
		text = fmt.Sprintf(format, args...)
	}
	if chain != "" {
		text = chain + ": " + text
	}
	return text
}
