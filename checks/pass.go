package checks

import (
	"fmt"
	"time"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// Limits are the tunable limits of the rules: the only settings a rule
// sees. Which rules run and how their findings are shown is the runner's
// business (Options).
type Limits struct {
	// MaxRetryAmplification is IDL208's limit on the product of
	// max_attempts along a chain.
	MaxRetryAmplification int
	// MinTTL is IDL111's minimum retention per storage tier.
	MinTTL map[string]time.Duration
}

// DefaultLimits returns the documented limits: IDL208's amplification and
// IDL111's ttl per tier (docs/configuration.md, `.idemlint.json`).
func DefaultLimits() Limits {
	return Limits{
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
	Rule   *Rule
	Doc    *boundary.Document
	Limits *Limits

	findings *[]Finding
}

// Report reports the value at `at` at the rule's severity.
func (p *DocumentPass) Report(at boundary.Pos, format string, args ...any) {
	p.add(newFinding(p.Rule, p.Rule.Severity, p.Doc.Path, p.Doc.Places, at, "", "", format, args...))
}

// Warn reports the value at `at` as a warning whatever the rule's
// severity: some variants of an error rule (e.g. raw_bytes
// under IDL106) warnings.
func (p *DocumentPass) Warn(at boundary.Pos, format string, args ...any) {
	p.add(newFinding(p.Rule, Warning, p.Doc.Path, p.Doc.Places, at, "", "", format, args...))
}

// Missing reports that the object at `in` lacks the member field: the
// position is the object's, the pointer where the field belongs. Callers
// ask first whether the field is absent: one present with the wrong type
// is the schema's finding (IDL002).
func (p *DocumentPass) Missing(in boundary.Pos, field string, format string, args ...any) {
	p.add(newFinding(p.Rule, p.Rule.Severity, p.Doc.Path, p.Doc.Places, in, field, "", format, args...))
}

func (p *DocumentPass) add(f Finding) { *p.findings = append(*p.findings, f) }

// ChainGraph is the documents of a set linked into chains
// (docs/format.md, Chains), built once per set for every rule that requires it.
var ChainGraph = &InputOf[*chain.Graph]{
	Name:   "chain graph",
	PerSet: true,
	Build: func(p *InputPass) (*chain.Graph, error) {
		g := chain.Build(p.Docs)
		g.Unreadable = p.Unreadable
		return g, nil
	},
}

// SetPass is what a cross-document rule receives.
type SetPass struct {
	Rule *Rule
	// Docs are the facts of every decoded document of the set, or of
	// every set for a rule that runs across sets (Rule.AcrossSets), sorted
	// by path: what the cross-document stage reads of a document
	// (chain.Facts), once the document itself is released.
	Docs   []*chain.Facts
	Limits *Limits

	inputs   map[Input]any // what the rule requires, by input (InputOf.Of)
	findings *[]Finding
	overlaps *[]overlap
}

// Report reports, at the rule's severity, the value at `at` in doc as a
// finding of the chain named chain ("" for none), and returns it so the
// rule can add related locations.
func (p *SetPass) Report(doc *chain.Facts, at boundary.Pos, chain string, format string, args ...any) *Finding {
	return p.add(newFinding(p.Rule, p.Rule.Severity, doc.Path, doc.Places, at, "", chain, format, args...))
}

// Missing is Report for a member field that the object at `in` lacks.
func (p *SetPass) Missing(doc *chain.Facts, in boundary.Pos, field, chain string, format string, args ...any) *Finding {
	return p.add(newFinding(p.Rule, p.Rule.Severity, doc.Path, doc.Places, in, field, chain, format, args...))
}

// ReportAt reports, at the rule's severity, a finding at a place of a file
// that is not a boundary document (an OpenAPI description, a proxy's
// configuration): line and column 1-based, pointer the JSON Pointer of the
// value when there is one. It returns the finding so the rule can relate
// the boundary document to it.
func (p *SetPass) ReportAt(file string, line, column int, pointer string, format string, args ...any) *Finding {
	return p.add(Finding{Rule: p.Rule.ID, Severity: p.Rule.Severity, File: file,
		Line: line, Column: column, Pointer: pointer, Message: message("", format, args...)})
}

func (p *SetPass) add(f Finding) *Finding {
	*p.findings = append(*p.findings, f)
	return &(*p.findings)[len(*p.findings)-1]
}

// newFinding is a finding at the value `at` of the document at file, whose
// places are places, or, when member is set, where that missing member of
// the object at `at` belongs.
func newFinding(r *Rule, sev Severity, file string, places boundary.Places, at boundary.Pos, member, chain, format string, args ...any) Finding {
	pl := places.Place(at)
	if member != "" {
		pl.Pointer = places.Member(at, member)
	}
	return Finding{Rule: r.ID, Severity: sev, File: file, Line: pl.Line, Column: pl.Column, Pointer: pl.Pointer, Chain: chain, Message: message(chain, format, args...)}
}

// message is a finding's text: format applied to args (format as is
// without args, so a message may contain '%'), after the chain it broke.
func message(chain, format string, args ...any) string {
	text := format
	if len(args) > 0 {
		text = fmt.Sprintf(format, args...)
	}
	if chain != "" {
		text = chain + ": " + text
	}
	return text
}
