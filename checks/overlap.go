package checks

// overlap is a finding that shares its cause with whatever finding a rule
// reports at the same place, recorded by SetPass.Overlap.
type overlap struct {
	finding findingKey
	rule    *Rule
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
		*p.overlaps = append(*p.overlaps, overlap{keyOf(f), other})
	}
}

// linkOverlaps is the related-location stage: each finding recorded as
// overlapping another rule's (SetPass.Overlap) names that rule's finding
// at the same place as a related location, when one survived. It runs on
// the findings that survived the overrides and suppressions.
func linkOverlaps(findings []Finding, overlaps []overlap) []Finding {
	if len(overlaps) == 0 {
		return findings
	}
	type place struct {
		rule, file, pointer string
		line, column        int
	}
	wanted := map[findingKey][]*Rule{}
	targets := map[place]int{} // index of the finding there, -1 until found
	for _, o := range overlaps {
		wanted[o.finding] = append(wanted[o.finding], o.rule)
		targets[place{o.rule.ID, o.finding.file, o.finding.pointer, o.finding.line, o.finding.column}] = -1
	}
	for i, f := range findings {
		at := place{f.Rule, f.File, f.Pointer, f.Line, f.Column}
		if j, ok := targets[at]; ok && j < 0 {
			targets[at] = i
		}
	}
	for i := range findings {
		f := &findings[i]
		rules, ok := wanted[keyOf(f)]
		if !ok {
			continue
		}
		for _, o := range rules {
			if j := targets[place{o.ID, f.File, f.Pointer, f.Line, f.Column}]; j >= 0 {
				t := findings[j]
				f.Related = append(f.Related, Location{File: t.File, Line: t.Line, Column: t.Column, Pointer: t.Pointer,
					Message: o.ID + " reports this " + o.Subject + " too"})
			}
		}
	}
	return findings
}
