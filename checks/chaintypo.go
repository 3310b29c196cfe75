package checks

import (
	"fmt"
	"slices"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/suggest"
)

// linkTypo is a broken chain link whose value is a typo of one that would
// let the chain go on: IDL201 reports it at the misspelt value, and the
// findings the break causes (IDL201's stop, IDL210's orphans) name it.
type linkTypo struct {
	doc         *boundary.Document
	at          boundary.Pos // the misspelt value
	field       string       // "to", "from", "service" or "operation_key"
	value, want string
	// match is the document whose value the misspelt one should equal,
	// and where that value is.
	match   *boundary.Document
	matchAt boundary.Pos
	// leftOut is the document the fix brings onto the chain; it and the
	// documents that link on from it are the orphans the typo makes.
	leftOut *boundary.Document
	tie     bool // the set holds both spellings as often
}

// message words the finding at the misspelt value. When the set cannot
// tell which spelling is right, it says the other may be the typo.
func (t *linkTypo) message(c *chain.Chain) string {
	msg := fmt.Sprintf("%s %q breaks the chain of %q; did you mean %q, the %s of the %s document?",
		t.field, t.value, c.Operation, t.want, t.matchField(), t.match.Kind)
	if t.tie {
		msg += fmt.Sprintf(" (or correct that %s to %q)", t.matchField(), t.value)
	}
	return msg
}

// matchField names the field of match that holds the wanted value.
func (t *linkTypo) matchField() string {
	switch t.field {
	case "to":
		return entryField(t.match)
	case "operation_key":
		return "operation_key"
	}
	return "to"
}

// entryField is the field a chain enters d by.
func entryField(d *boundary.Document) string {
	if d.Kind == boundary.Adapter {
		return "service"
	}
	return "from"
}

// linkTypos finds the typo behind each incomplete state-changing chain of
// the set that has one, by chain.
func linkTypos(g *chain.Graph, docs []*boundary.Document) map[*chain.Chain]*linkTypo {
	var ix *typoIndex
	out := map[*chain.Chain]*linkTypo{}
	for _, c := range g.Chains {
		if !c.StateChanging || c.Complete() {
			continue
		}
		if ix == nil {
			ix = newTypoIndex(docs)
		}
		if t := ix.typoOf(c); t != nil {
			out[c] = t
		}
	}
	return out
}

// typoIndex is what finding typos looks up, built once per set so that
// the search stays linear in the set however many chains break.
type typoIndex struct {
	uses     map[string]int                   // how many linking fields of the set hold each id
	carriers map[kindKey][]*boundary.Document // by kind and operation_key
	entries  map[kindKey][]*boundary.Document // by kind and from (service for an adapter)
}

type kindKey struct {
	kind boundary.Kind
	key  string
}

func newTypoIndex(docs []*boundary.Document) *typoIndex {
	ix := &typoIndex{uses: componentUses(docs), carriers: map[kindKey][]*boundary.Document{}, entries: map[kindKey][]*boundary.Document{}}
	for _, d := range docs {
		if !chain.Linkable(d) {
			continue
		}
		e := kindKey{d.Kind, entryValue(d).Value}
		ix.entries[e] = append(ix.entries[e], d)
		for _, op := range d.Operations.Items {
			k := kindKey{d.Kind, op.Key.Value}
			if n := len(ix.carriers[k]); n == 0 || ix.carriers[k][n-1] != d {
				ix.carriers[k] = append(ix.carriers[k], d)
			}
		}
	}
	return ix
}

func (ix *typoIndex) typoOf(c *chain.Chain) *linkTypo {
	s, last := c.Stop, c.Last()
	// The next hop is there but lacks the operation: the browser edge
	// names the operation, so a near key downstream is the typo.
	for _, d := range s.Lacking {
		keys := make([]string, 0, len(d.Operations.Items))
		for _, op := range d.Operations.Items {
			keys = append(keys, op.Key.Value)
		}
		if k := suggest.One(c.Operation, keys); k != "" {
			op := d.Operations.Items[slices.Index(keys, k)]
			return &linkTypo{doc: d, at: op.Key.Pos, field: "operation_key", value: k, want: c.Operation,
				match: last.Doc, matchAt: last.Op.Key.Pos, leftOut: d}
		}
	}
	if len(s.Lacking) > 0 || last.Doc.Policy != nil {
		return nil // an embedded policy's service: IDL201's own message says which
	}
	// No next hop at all: one that carries the operation at a near id.
	near := ix.carriers[kindKey{s.Next, c.Operation}]
	ids := make([]string, len(near))
	for i, d := range near {
		ids[i] = entryValue(d).Value
	}
	id := suggest.One(s.At, ids)
	if id == "" {
		return nil
	}
	d := near[slices.Index(ids, id)]
	// The spelling fewer linking fields use is the typo; when the set
	// cannot tell, it is the "to" where the chain breaks.
	uses := ix.uses
	if uses[id] < uses[s.At] {
		return &linkTypo{doc: d, at: entryValue(d).Pos, field: entryField(d), value: id, want: s.At,
			match: last.Doc, matchAt: last.Doc.To.Pos, leftOut: d}
	}
	return &linkTypo{doc: last.Doc, at: last.Doc.To.Pos, field: "to", value: s.At, want: id,
		match: d, matchAt: entryValue(d).Pos, leftOut: d, tie: uses[id] == uses[s.At]}
}

// leftOut maps each document a typo leaves out of its chain to that typo,
// the first by chain order: the document the fix brings on, and those that
// link on from it.
func leftOut(g *chain.Graph, typos map[*chain.Chain]*linkTypo, docs []*boundary.Document) map[*boundary.Document]*linkTypo {
	out := map[*boundary.Document]*linkTypo{}
	var ix *typoIndex
	for _, c := range g.Chains {
		t := typos[c]
		if t == nil {
			continue
		}
		if ix == nil {
			ix = newTypoIndex(docs)
		}
		reached := []*boundary.Document{t.leftOut}
		for len(reached) > 0 {
			d := reached[len(reached)-1]
			reached = reached[:len(reached)-1]
			if _, seen := out[d]; seen {
				continue
			}
			out[d] = t
			if d.Kind != boundary.Adapter {
				next := boundary.Kinds[slices.Index(boundary.Kinds, d.Kind)+1]
				reached = append(reached, ix.entries[kindKey{next, d.To.Value}]...)
			}
		}
	}
	return out
}

// componentUses counts, for each component id, the linking fields of docs
// that hold it.
func componentUses(docs []*boundary.Document) map[string]int {
	uses := map[string]int{}
	for _, d := range docs {
		for _, v := range []boundary.String{d.From, d.To, d.Service} {
			if v.Value != "" {
				uses[v.Value]++
			}
		}
	}
	return uses
}

func entryValue(d *boundary.Document) boundary.String {
	if d.Kind == boundary.Adapter {
		return d.Service
	}
	return d.From
}
