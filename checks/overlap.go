package checks

import (
	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// overlap is a finding that shares its cause with whatever finding a rule
// reports at the same place, recorded by SetPass.Overlap.
type overlap struct {
	finding findingKey
	rule    *Rule
	// cause, when set, is the place of the other rule's finding: a cause
	// elsewhere (SetPass.CausedBy); unset, the place is the finding's own.
	cause *place
}

// place is where a finding is, whatever it says.
type place struct {
	rule, file, pointer string
	line, column        int
}

// findingKey identifies a finding, whatever related locations it gets.
type findingKey struct {
	rule, file, pointer, chain, message string
	line, column                        int
}

func keyOf(f *Finding) findingKey {
	return findingKey{f.Rule, f.File, f.Pointer, f.Chain, f.Message, f.Line, f.Column}
}

// Overlap records that f shares its cause with the finding rule other
// reports at the same place, if it reports one: IDL204's upstream owner is
// IDL105's finding too. The related-location stage after the rules links
// the two when that finding survives the overrides and suppressions, so a
// rule never restates another's condition and a disabled or suppressed
// rule's finding is never linked to. other must name its Subject; a nil f
// (a finding already reported) is ignored.
func (p *SetPass) Overlap(f *Finding, other *Rule) {
	if other.Subject == "" {
		panic("checks: rule " + p.Rule.ID + " overlaps " + other.ID + ", which names no Subject")
	}
	if f != nil {
		*p.overlaps = append(*p.overlaps, overlap{finding: keyOf(f), rule: other})
	}
}

// CausedBy records that f follows from the finding rule cause reports at
// the value at `at` of doc, if it reports one there: IDL201's stop and
// IDL210's orphans follow from the misspelt link IDL201 reports. The
// related-location stage names that finding, with its message, when it
// survives, as Overlap does. A nil f is ignored.
func (p *SetPass) CausedBy(f *Finding, cause *Rule, doc *chain.Facts, at boundary.Pos) {
	if f == nil {
		return
	}
	pl := doc.Place(at)
	*p.overlaps = append(*p.overlaps, overlap{finding: keyOf(f), rule: cause,
		cause: &place{cause.ID, doc.Path, pl.Pointer, pl.Line, pl.Column}})
}

// linkOverlaps is the related-location stage: each finding recorded as
// overlapping another rule's (SetPass.Overlap) names that rule's finding
// at the same place as a related location, when one survived. It runs on
// the findings that survived the overrides and suppressions.
func linkOverlaps(findings []Finding, overlaps []overlap) []Finding {
	if len(overlaps) == 0 {
		return findings
	}
	wanted := map[findingKey][]overlap{}
	targets := map[place]int{} // index of the finding there, -1 until found
	for _, o := range overlaps {
		wanted[o.finding] = append(wanted[o.finding], o)
		targets[o.target()] = -1
	}
	for i, f := range findings {
		at := place{f.Rule, f.File, f.Pointer, f.Line, f.Column}
		if j, ok := targets[at]; ok && j < 0 {
			targets[at] = i
		}
	}
	for i := range findings {
		f := &findings[i]
		for _, o := range wanted[keyOf(f)] {
			j := targets[o.target()]
			if j < 0 || j == i {
				continue
			}
			t := findings[j]
			msg := o.rule.ID + " reports this " + o.rule.Subject + " too"
			if o.cause != nil {
				msg = "caused by " + t.Rule + " " + t.Message
			}
			f.Related = append(f.Related, Location{File: t.File, Line: t.Line, Column: t.Column, Pointer: t.Pointer, Message: msg})
		}
	}
	return findings
}

// target is the place of the finding o links to.
func (o overlap) target() place {
	if o.cause != nil {
		return *o.cause
	}
	return place{o.rule.ID, o.finding.file, o.finding.pointer, o.finding.line, o.finding.column}
}
