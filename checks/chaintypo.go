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
	doc         *chain.Facts
	at          boundary.Pos // the misspelt value
	field       string       // "to", "from", "service" or "operation_key"
	value, want string
	// match is the document whose value the misspelt one should equal,
	// and where that value is.
	match   *chain.Facts
	matchAt boundary.Pos
	// leftOut is the document the fix brings onto the chain; it and the
	// documents that link on from it are the orphans the typo makes.
	leftOut *chain.Facts
	tie     bool // the set holds both spellings as often
}

// message words the finding at the misspelt value. When the set cannot
// tell which spelling is right, it says the other may be the typo.
func (t *linkTypo) message(c *chain.Chain) string {
	msg := fmt.Sprintf("%s %q breaks the chain of %q; did you mean %q, the %s of the %s document?",
		t.field, t.value, c.Operation(), t.want, t.matchField(), t.match.Kind)
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
func entryField(d *chain.Facts) string {
	if d.Kind == boundary.Adapter {
		return "service"
	}
	return "from"
}

// chainTypos are the typos behind the set's broken chains and the
// documents each leaves out: IDL201 reports the typos, IDL210 names them
// at the documents. Found once per set for both, as the chain graph is.
var chainTypos = &InputOf[*typos]{
	Name:   "link typos",
	PerSet: true,
	Build: func(p *InputPass) (*typos, error) {
		g, err := ChainGraph.From(p)
		if err != nil {
			return nil, err
		}
		return findTypos(g, p.Docs), nil
	},
}

// typos are the link typos of a set.
type typos struct {
	// byChain is the typo behind each incomplete state-changing chain
	// that has one.
	byChain map[*chain.Chain]*linkTypo
	// leftOut is, for each document a typo leaves out of its chain, that
	// typo (see leftOut).
	leftOut map[*chain.Facts]*linkTypo
}

func findTypos(g *chain.Graph, docs []*chain.Facts) *typos {
	var broken []*chain.Chain
	for _, c := range g.Chains {
		if c.StateChanging() && !c.Complete() {
			broken = append(broken, c)
		}
	}
	t := &typos{byChain: map[*chain.Chain]*linkTypo{}, leftOut: map[*chain.Facts]*linkTypo{}}
	if len(broken) == 0 {
		return t
	}
	ix := newTypoIndex(docs, broken)
	for _, c := range broken {
		if typo := ix.typoOf(c); typo != nil {
			t.byChain[c] = typo
		}
	}
	if len(t.byChain) > 0 {
		t.leftOut = leftOut(g, t.byChain, ix)
	}
	return t
}

// typoIndex is what finding typos looks up, built once per set so that
// the search stays linear in the set however many chains break.
type typoIndex struct {
	uses map[string]int // how many linking fields of the set hold each id
	// carriers are the documents by kind and operation_key, for the keys
	// the broken chains look up (wants) only: every operation of the set
	// would be an entry, and few chains break.
	carriers map[kindKey][]*chain.Facts
	entries  map[kindKey][]*chain.Facts // by kind and from (service for an adapter)
	// keys holds the operation keys of one document typoOf reads: a
	// chain stopping at a busy gateway reads thousands.
	keys []string
}

type kindKey struct {
	kind boundary.Kind
	key  string
}

// wants returns the carriers typoOf looks up for the broken chain c: those
// of the kind it needed next with its operation, when no document of that
// kind is where it stops. False when it looks up none.
func wants(c *chain.Chain) (kindKey, bool) {
	if len(c.Stop.Lacking) > 0 || c.Last().Doc.Policy != nil {
		return kindKey{}, false
	}
	return kindKey{c.Stop.Next, c.Operation()}, true
}

func newTypoIndex(docs []*chain.Facts, broken []*chain.Chain) *typoIndex {
	ix := &typoIndex{uses: componentUses(docs), carriers: map[kindKey][]*chain.Facts{}, entries: map[kindKey][]*chain.Facts{}}
	wanted := map[kindKey]bool{}
	for _, c := range broken {
		if k, ok := wants(c); ok {
			wanted[k] = true
		}
	}
	for _, d := range docs {
		if !chain.Linkable(d) {
			continue
		}
		e := kindKey{d.Kind, entryValue(d).Value}
		ix.entries[e] = append(ix.entries[e], d)
		for _, op := range d.Operations.Items {
			k := kindKey{d.Kind, op.Key.Value}
			if !wanted[k] {
				continue
			}
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
		ix.keys = ix.keys[:0]
		for _, op := range d.Operations.Items {
			ix.keys = append(ix.keys, op.Key.Value)
		}
		if k := suggest.One(c.Operation(), ix.keys); k != "" {
			op := d.Operations.Items[slices.Index(ix.keys, k)]
			return &linkTypo{doc: d, at: op.Key.Pos, field: "operation_key", value: k, want: c.Operation(),
				match: last.Doc, matchAt: last.Op.Key.Pos, leftOut: d}
		}
	}
	want, ok := wants(c)
	if !ok {
		return nil // an embedded policy's service: IDL201's own message says which
	}
	// No next hop at all: one that carries the operation at a near id.
	near := ix.carriers[want]
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
func leftOut(g *chain.Graph, typos map[*chain.Chain]*linkTypo, ix *typoIndex) map[*chain.Facts]*linkTypo {
	out := map[*chain.Facts]*linkTypo{}
	for _, c := range g.Chains {
		t := typos[c]
		if t == nil {
			continue
		}
		reached := []*chain.Facts{t.leftOut}
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
func componentUses(docs []*chain.Facts) map[string]int {
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

func entryValue(d *chain.Facts) boundary.String {
	if d.Kind == boundary.Adapter {
		return d.Service
	}
	return d.From
}
