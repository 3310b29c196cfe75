package checks

import (
	"slices"
	"strings"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// This file reads the documents' own suppressions with the per-document
// stages and applies them after the rules, as one stage of the pipeline
// (pipeline.go). A document lists them in boundary.SuppressionField:
//
//	"x-idemlint-ignore": [{"rule": "IDL112", "reason": "..."}]
//
// As an "x-" field it is free for the JSON Schema; IDL003 checks it.

// suppression is one valid entry of a document's boundary.SuppressionField: the
// rule it hides and where it is written, read with the per-document stages
// and used after the cross-document rules.
type suppression struct {
	at   Finding // where the entry is, for reporting it unused
	rule string
	used bool
}

// suppressions are the valid entries of a set's documents by file, and the
// IDL003 findings about the malformed ones.
type suppressions struct {
	entries   map[string][]*suppression
	malformed []Finding
}

// fileSuppressions are one document's suppressions, read in the
// per-document phase.
type fileSuppressions struct {
	entries   []*suppression
	malformed []Finding
}

// add gathers the suppressions of the document at path into the set's.
func (s *suppressions) add(path string, fs fileSuppressions) {
	if len(fs.entries) > 0 {
		s.entries[path] = fs.entries
	}
	s.malformed = append(s.malformed, fs.malformed...)
}

// apply drops the findings hidden by a suppression of the document they
// are located in and adds IDL003's findings: the malformed suppressions,
// and the unused ones of the rules that ran (skips reports those that did
// not: whether their suppression is still needed is unknown). It reuses
// the storage of findings, in which no finding of a skipped rule is left.
func (sup *suppressions) apply(findings []Finding, skips func(rule string) bool) []Finding {
	entries := sup.entries
	out := findings[:0]
	for _, f := range findings {
		if !hide(entries[f.File], f.Rule) {
			out = append(out, f)
		}
	}
	if skips(idl003.ID) {
		return out
	}
	// A set whose documents all carry a stale suppression has as many
	// IDL003 findings as documents: the output grows once.
	unused := 0
	for _, list := range entries {
		for _, s := range list {
			if !s.used && !skips(s.rule) {
				unused++
			}
		}
	}
	out = slices.Grow(out, len(sup.malformed)+unused)
	out = append(out, sup.malformed...)
	for _, list := range entries {
		for _, s := range list {
			if !s.used && !skips(s.rule) {
				f := s.at
				f.Message = "the suppression of " + s.rule + " hides no finding in this file; remove it"
				out = append(out, f)
			}
		}
	}
	return out
}

// hide reports whether an entry of list suppresses rule, and marks it used.
func hide(list []*suppression, rule string) bool {
	for _, s := range list {
		if s.rule == rule {
			s.used = true
			return true
		}
	}
	return false
}

// readSuppressions reads the document's suppressions, reporting each
// malformed entry, and each naming no rule of the run's rules, as an
// IDL003 finding through p.
func readSuppressions(p *DocumentPass, rules Rules) []*suppression {
	field := p.Doc.Suppressions
	switch {
	case field == nil:
		return nil
	case field.State == boundary.Invalid:
		p.Report(field.Pos, `%q must be an array of {"rule": "IDLnnn", "reason": "..."} objects, found %s`, boundary.SuppressionField, field.Kind)
		return nil
	}
	var out []*suppression
	first := map[string]boundary.Pos{} // rule id -> its first entry
	for i := range field.Entries {
		e := &field.Entries[i]
		if rule, ok := readEntry(p, rules, e, first); ok {
			at := newFinding(idl003, Warning, p.Doc.Path, p.Doc.Places, e.Pos, "", "", "")
			out = append(out, &suppression{at: at, rule: rule})
		}
	}
	return out
}

// readEntry checks one entry and returns the rule it suppresses.
func readEntry(p *DocumentPass, rules Rules, e *boundary.SuppressionEntry, first map[string]boundary.Pos) (string, bool) {
	if !e.OK() {
		p.Report(e.Pos, `a suppression must be an object {"rule": "IDLnnn", "reason": "..."}, found %s`, e.Kind)
		return "", false
	}
	ok := true
	for _, m := range e.Unknown {
		p.Report(m.Pos, "unknown field %q in a suppression; allowed: reason, rule", m.Name)
		ok = false
	}

	var rule string
	switch n := e.Rule; n.State {
	case boundary.Absent:
		p.Missing(e.Pos, "rule", `add "rule" to this suppression: the id of the rule whose findings it hides, e.g. "IDL112"`)
		ok = false
	case boundary.Invalid:
		p.Report(n.Pos, `"rule" must be a rule id such as "IDL112", found %s`, e.RuleKind)
		ok = false
	default:
		rule = n.Value
		r, known := rules.Lookup(rule)
		prev, seen := first[rule]
		switch {
		case !known || r.ID != rule:
			p.Report(n.Pos, "unknown rule %q; %s", rule, rules.Hint(rule))
			ok = false
		case rule == IDL001.ID || rule == idl003.ID:
			p.Report(n.Pos, "%s cannot be suppressed; fix what it reports instead", rule)
			ok = false
		case seen:
			p.Report(n.Pos, "%s is already suppressed by %s; remove this entry", rule, p.Doc.Pointer(prev))
			ok = false
		default:
			first[rule] = e.Pos
		}
	}

	switch n := e.Reason; {
	case n.State == boundary.Absent:
		p.Missing(e.Pos, "reason", `add "reason" to this suppression: say why the finding does not apply here`)
		ok = false
	case n.State == boundary.Invalid:
		p.Report(n.Pos, `"reason" must be a string saying why the finding does not apply here, found %s`, e.ReasonKind)
		ok = false
	case strings.TrimSpace(n.Value) == "":
		p.Report(n.Pos, `"reason" is empty; say why the finding does not apply here`)
		ok = false
	}
	return rule, ok
}
