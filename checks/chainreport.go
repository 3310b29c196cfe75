package checks

import (
	"fmt"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// This file holds what the chain rules (IDL201-IDL213) share: reporting a
// finding once however many chains cross it, and the wording of what a
// missing hop might explain.

// chainReporter reports the findings of one run of a chain rule, each
// once: a defect that several chains share, such as a gateway list that
// every flow crosses, is reported for the first chain in Graph order only,
// so output stays short and stable.
type chainReporter struct {
	p    *SetPass
	seen map[chainFinding]bool
}

type chainFinding struct {
	doc    *chain.Facts
	at     boundary.Pos
	member string
	msg    string
}

func newChainReporter(p *SetPass) *chainReporter {
	return &chainReporter{p: p, seen: map[chainFinding]bool{}}
}

// first reports whether f is new, and remembers it.
func (r *chainReporter) first(f chainFinding) bool {
	if r.seen[f] {
		return false
	}
	r.seen[f] = true
	return true
}

// at reports msg at the value at `at` in doc as a finding of chain c, and
// returns it (nil when already reported) for related locations.
func (r *chainReporter) at(c *chain.Chain, doc *chain.Facts, at boundary.Pos, msg string) *Finding {
	if !r.first(chainFinding{doc, at, "", msg}) {
		return nil
	}
	return r.p.Report(doc, at, c.Name(), "%s", msg)
}

// missing reports msg where the member of the object at `in` belongs.
func (r *chainReporter) missing(c *chain.Chain, doc *chain.Facts, in boundary.Pos, member, msg string) *Finding {
	if !r.first(chainFinding{doc, in, member, msg}) {
		return nil
	}
	return r.p.Missing(doc, in, member, c.Name(), "%s", msg)
}

// missingHopNote says, for a finding that a missing hop might explain,
// how many files of the set chains could not use; "" when there are none.
func missingHopNote(g *chain.Graph) string {
	n := g.Missing()
	if n == 0 {
		return ""
	}
	files := "files"
	if n == 1 {
		files = "file"
	}
	return fmt.Sprintf(" (%d %s of the set could not be read or linked; one may be the missing hop)", n, files)
}

// relate adds a related location to f when f was reported (not nil).
func relate(f *Finding, doc *chain.Facts, at boundary.Pos, msg string) {
	if f != nil {
		f.Relate(doc, at, msg)
	}
}
