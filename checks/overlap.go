package checks

// linkOverlaps is the related-location stage: where a finding of a rule
// and one of a rule it overlaps (Rule.Overlaps) are at the same place, the
// first names the second as a related location. It runs on the findings
// that survived the overrides and suppressions, so a disabled or
// suppressed rule's finding is never linked to, and no rule restates
// another's condition to decide whether it would have reported.
func linkOverlaps(findings []Finding) []Finding {
	type place struct {
		rule, file, pointer string
		line, column        int
	}
	overlapped := map[string]bool{}
	for _, r := range Rules() {
		for _, o := range r.Overlaps {
			overlapped[o.ID] = true
		}
	}
	targets := map[place]int{} // index of the first finding there
	for i, f := range findings {
		at := place{f.Rule, f.File, f.Pointer, f.Line, f.Column}
		if _, seen := targets[at]; overlapped[f.Rule] && !seen {
			targets[at] = i
		}
	}
	for i := range findings {
		f := &findings[i]
		r, ok := registry[f.Rule]
		if !ok {
			continue
		}
		for _, o := range r.Overlaps {
			if j, ok := targets[place{o.ID, f.File, f.Pointer, f.Line, f.Column}]; ok {
				t := findings[j]
				f.Related = append(f.Related, Location{File: t.File, Line: t.Line, Column: t.Column, Pointer: t.Pointer,
					Message: o.ID + " reports this " + o.Subject + " too"})
			}
		}
	}
	return findings
}
