// Package chain links the documents of a boundary set into chains: the
// paths one operation takes from a browser through the BFF and the gateway
// to the adapter policy that owns its idempotency key (docs/format.md,
// Chains).
// It reads each document's Facts, what the cross-document stage needs of
// it, so that the documents themselves need not stay live.
//
// The graph is built once per set, in time linear in the documents,
// operations and paths; every cross-document rule (IDL201-IDL210) and the
// graph command read it instead of walking the documents again.
package chain

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// Graph is a boundary set linked into chains.
type Graph struct {
	// Chains holds every path of every operation that enters the set at a
	// browser_to_bff edge, complete or not, sorted by Name and then by the
	// documents' paths (two edges may join the same components).
	Chains []*Chain

	// Unlinkable counts the documents of the set that chains cannot use:
	// those without a known kind or without their linking fields,
	// including an embedded policy without service (the schema check
	// reports them all). Unreadable counts the files of the set that did
	// not decode at all; the caller sets it. Any of them might be the
	// missing link of a chain: see Missing.
	Unlinkable, Unreadable int

	// Duplicates are the documents that define a hop a document earlier
	// in the set (sorted by path) already defines (IDL211). Chains use the
	// first and never reach a duplicate.
	Duplicates []Duplicate

	onChain  map[*Facts]bool
	arrivals map[link]int // edges per (kind, to)
}

// Chain is one path of one operation. A set has one for every operation
// of every browser_to_bff edge, so what a chain's hops say (its operation,
// its name, its key header) is read from them, not kept beside them.
type Chain struct {
	Hops []Hop // in order, starting at the browser_to_bff edge
	// Stop says where the chain ends short of an adapter policy; nil when
	// the chain is complete.
	Stop *Stop
	// keyHop is the first hop that has http_idempotency, or -1.
	keyHop int
}

// Operation is the chain's operation_key, the same at every hop.
func (c *Chain) Operation() string { return c.Hops[0].Op.Key.Value }

// StateChanging is the operation's nature as the browser_to_bff edge
// declares it: that is what the browser sends, whatever later hops say.
func (c *Chain) StateChanging() bool { return c.Hops[0].Op.StateChanging }

// KeyHeader is the chain's key header: the one declared by its first hop
// that has http_idempotency (the browser edge, normally), because that is
// the header the key travels in from the start; the default when none has.
func (c *Chain) KeyHeader() string {
	if c.keyHop < 0 {
		return boundary.DefaultKeyHeader
	}
	return c.Hops[c.keyHop].Doc.Idempotency.KeyHeader()
}

// Name identifies the chain in findings:
// "orders.create: web -> checkout-bff -> edge-gw -> orders-adapter".
func (c *Chain) Name() string { return string(c.appendName(nil)) }

// appendName appends the chain's Name to b.
func (c *Chain) appendName(b []byte) []byte {
	b = append(b, c.Operation()...)
	b = append(b, ": "...)
	b = append(b, c.Hops[0].Doc.From.Value...)
	for _, h := range c.Hops {
		if h.Kind != boundary.Adapter {
			b = append(b, " -> "...)
			b = append(b, h.Doc.To.Value...)
		}
	}
	return b
}

// Hop is one document of a chain and the chain's operation in it.
type Hop struct {
	// Kind is the hop's role in the chain. It is Adapter for the policy
	// hop, also when the policy is embedded in a gateway_to_adapter
	// document (then Doc is that edge, the hop before this one).
	Kind boundary.Kind
	Doc  *Facts
	Op   *Operation
}

// Stop is where an incomplete chain ends.
type Stop struct {
	Next boundary.Kind // the kind of document the chain needed next
	At   string        // the component it needed one at: the last edge's to
	// Lacking are the documents of kind Next at At; none of them carries
	// the operation. Empty when no document of kind Next is at At.
	Lacking []*Facts
}

// Complete reports whether the chain reaches an adapter policy.
func (c *Chain) Complete() bool { return c.Stop == nil }

// Last returns the hop the chain reached last: the adapter policy hop of a
// complete chain.
func (c *Chain) Last() Hop { return c.Hops[len(c.Hops)-1] }

// KeyHop returns the hop that declares the chain's key header: the first
// hop when none declares one.
func (c *Chain) KeyHop() Hop { return c.Hops[max(c.keyHop, 0)] }

// Embedded reports whether the hop is a policy embedded in an edge.
func (h Hop) Embedded() bool {
	return h.Kind == boundary.Adapter && h.Doc.Kind == boundary.GatewayToAdapter
}

// Endpoints names the components of the hop: "web -> checkout-bff" for an
// edge, the service for the policy.
func (h Hop) Endpoints() string {
	if h.Kind == boundary.Adapter {
		return h.Doc.Policy.Service.Value
	}
	return h.Doc.From.Value + " -> " + h.Doc.To.Value
}

// String names the hop in messages: "bff_to_gateway checkout-bff -> edge-gw",
// "adapter orders-adapter".
func (h Hop) String() string { return string(h.Kind) + " " + h.Endpoints() }

// DeclaredHeader is the key header doc works with: its http_idempotency
// header, or the default when it declares none.
func DeclaredHeader(doc *Facts) string { return doc.Idempotency.KeyHeader() }

// Missing counts the files that might hold a missing hop: unreadable or
// unlinkable ones.
func (g *Graph) Missing() int { return g.Unlinkable + g.Unreadable }

// Duplicate is a document defining a hop that First already defines for
// the same operation: an edge with the same boundary, from and to, or an
// owner policy (standalone or embedded) for the same service.
type Duplicate struct {
	Doc, First *Facts
	Operation  string // the operation both declare
	// Policy is true for two owner policies of one service, false for
	// two edges with the same boundary, from and to.
	Policy bool
}

// OnChain reports whether doc is a hop of some chain, complete or not.
func (g *Graph) OnChain(doc *Facts) bool { return g.onChain[doc] }

// Upstream counts the documents of the kind before doc's in a chain that
// end where doc starts: edges whose to is doc's from (or, for an adapter,
// gateway_to_adapter edges whose to is its service), whatever their
// operations. It tells a document that has no predecessor at all from one
// that only lacks a matching operation or a reachable predecessor.
func (g *Graph) Upstream(doc *Facts) (prev boundary.Kind, n int) {
	id := doc.From.Value
	if doc.Kind == boundary.Adapter {
		id = doc.Service.Value
	}
	for _, k := range boundary.Kinds[:len(boundary.Kinds)-1] {
		if next(k) == doc.Kind {
			return k, g.arrivals[link{rankOf(k), id}]
		}
	}
	return "", 0
}

// next returns the kind of document that follows an edge kind in a chain.
// It and rankOf run for every hop of every chain: switches, not lookups.
func next(k boundary.Kind) boundary.Kind {
	switch k {
	case boundary.BrowserToBFF:
		return boundary.BFFToGateway
	case boundary.BFFToGateway:
		return boundary.GatewayToAdapter
	}
	return boundary.Adapter
}

// link is a component as seen by documents of one kind: the from of an
// edge, the to of an edge (arrivals), or the service of an adapter.
type link struct {
	kind rank
	id   string
}

// rank is a kind's position in a chain: a cheaper map key than its name.
type rank uint8

func rankOf(k boundary.Kind) rank {
	switch k {
	case boundary.BrowserToBFF:
		return 0
	case boundary.BFFToGateway:
		return 1
	case boundary.GatewayToAdapter:
		return 2
	}
	return 3
}

// entry is where a chain enters a document with one operation (an edge at
// its from, an adapter at its service): a seeded hash of the kind, the
// component id and the operation key. Every hop of every chain looks one
// up, and hashing a few short strings beats a string-keyed map on a set of
// thousands of documents. Carriers are checked on lookup, so a collision
// could cost a step, never a wrong link.
type entry uint64

func (b *builder) entryOf(kind rank, component, op string) entry {
	var h maphash.Hash
	h.SetSeed(b.seed)
	h.WriteByte(byte(kind))
	h.WriteString(component)
	h.WriteByte(0)
	h.WriteString(op)
	return entry(h.Sum64())
}

// carrier is a document and the operation of it that a chain follows, by
// their indexes: a set has a carrier for every operation, 16 bytes each.
type carrier struct {
	di   int32 // the document's index in Build's docs
	op   int32 // the operation's index in the document
	next int32 // the carrier indexed before it under the same entry, or -1
	kind rank
	// forked is set once a chain went through the carrier: a later path
	// reaching it does not fork again.
	forked bool
}

// hop returns the hop of kind that c carries.
func (b *builder) hop(kind boundary.Kind, c carrier) Hop {
	d := b.docs[c.di]
	return Hop{Kind: kind, Doc: d, Op: &d.Operations.Items[c.op]}
}

// is reports whether c is the carrier of op at component at for kind.
func (b *builder) is(c carrier, kind rank, at, op string) bool {
	d := b.docs[c.di]
	return c.kind == kind && entryID(d) == at && d.Operations.Items[c.op].Key.Value == op
}

// entryID is the component a chain enters d at: an edge's from, an
// adapter's service.
func entryID(d *Facts) string {
	if d.Kind == boundary.Adapter {
		return d.Service.Value
	}
	return d.From.Value
}

type builder struct {
	g    *Graph
	docs []*Facts // Build's
	// heads indexes carriers by entry, so that a path finds its next hop
	// in one lookup however many documents start at a busy gateway. The
	// carriers of one entry form a list through next (no slice per entry:
	// a set has tens of thousands of entries).
	heads    map[entry]int32
	seed     maphash.Seed
	carriers []carrier
	// starts lists the documents at each component whatever their
	// operations: what Stop.Lacking reports.
	starts   map[link][]*Facts
	browsers []int32 // carriers that are browser_to_bff operations
	slab     []Chain // chains are carved from it: one allocation per chunk
	// onChain marks, by index in Build's docs, the documents some path
	// entered: a slice write per hop instead of a map lookup.
	onChain []bool
	defines []bool // duplicates' answer, reused from document to document
}

// Build links docs into chains: one per operation of each browser_to_bff
// edge, plus one per fan-out branch (see extend), so that time and memory
// stay linear in the set however often component ids recur. A document
// that defines a hop an earlier one defines for the same operation is a
// Duplicate, left out: chains use the first.
// Documents whose linking fields are missing (no from or to on an edge, no
// service on an adapter) take part in no chain: the schema check reports
// them.
func Build(docs []*Facts) *Graph {
	ops := 0
	for _, d := range docs {
		ops += len(d.Operations.Items)
	}
	b := builder{
		// The maps by component grow as they go: a set has far fewer
		// components than documents, and the graph keeps arrivals to the
		// end of the cross-document stage.
		g:        &Graph{onChain: make(map[*Facts]bool, len(docs)), arrivals: map[link]int{}},
		docs:     docs,
		onChain:  make([]bool, len(docs)),
		heads:    make(map[entry]int32, ops),
		seed:     maphash.MakeSeed(),
		carriers: make([]carrier, 0, ops),
		starts:   map[link][]*Facts{},
	}
	first := firsts{byEntry: make(map[entry]firstHop, ops), docs: docs, seed: b.seed}
	for di, d := range docs {
		if !Linkable(d) {
			b.g.Unlinkable++
			continue
		}
		if p := d.Policy; p != nil && p.Embedded && !p.Service.OK() {
			b.g.Unlinkable++ // the edge links, its policy cannot
		}
		defines := b.duplicates(int32(di), &first)
		id := entryID(d)
		if d.Kind != boundary.Adapter {
			b.g.arrivals[link{rankOf(d.Kind), d.To.Value}]++
		}
		start := link{rankOf(d.Kind), id}
		b.starts[start] = append(b.starts[start], d)
		for i := range d.Operations.Items {
			op := &d.Operations.Items[i]
			if !op.Key.OK() {
				continue
			}
			if !defines[i] {
				continue // a duplicate definition of the hop: chains use the first
			}
			e := b.entryOf(start.kind, id, op.Key.Value)
			head, ok := b.heads[e]
			if !ok {
				head = -1
			}
			// A duplicate operation_key is an IDL002 finding; the first
			// wins. Documents are indexed one at a time, so a duplicate's
			// first is the head of its entry.
			if ok && b.carriers[head].di == int32(di) && d.Operations.Items[b.carriers[head].op].Key.Value == op.Key.Value {
				continue
			}
			ci := int32(len(b.carriers))
			b.carriers = append(b.carriers, carrier{di: int32(di), op: int32(i), next: head, kind: start.kind})
			b.heads[e] = ci
			if d.Kind == boundary.BrowserToBFF {
				b.browsers = append(b.browsers, ci)
			}
		}
	}
	for _, i := range b.browsers {
		c := b.carriers[i]
		path := make([]Hop, 1, len(boundary.Kinds))
		path[0] = b.hop(boundary.BrowserToBFF, c)
		b.extend(path, c)
	}
	for di, on := range b.onChain {
		if on {
			b.g.onChain[docs[di]] = true
		}
	}
	slices.SortFunc(b.g.Chains, compareChains)
	return b.g
}

// hopKey identifies the hop a document defines for one operation: an
// edge's boundary, from and to, or an owner policy's service.
type hopKey struct {
	kind     boundary.Kind
	from, to string // from is the service for a policy
	op       string
}

func hopOf(d *Facts, op string) hopKey {
	if d.Kind == boundary.Adapter {
		return hopKey{boundary.Adapter, d.Service.Value, "", op}
	}
	return hopKey{d.Kind, d.From.Value, d.To.Value, op}
}

// firsts records, for each hop a document defines for an operation, the
// document that defines it first. A set has a hop per operation of every
// document, so hops are indexed by a seeded hash, as carriers are: a map
// keyed by the hop's four strings took eight times the room and, on tens
// of thousands of documents, most of the time of the cross-document stage.
// A hash that two hops share is told apart by the key each one rebuilds
// from its document; the rare losers go to a map by full key.
type firsts struct {
	byEntry  map[entry]firstHop
	collided map[hopKey]*Facts
	docs     []*Facts // Build's
	seed     maphash.Seed
}

// firstHop is a hop by where its key comes from: the index of the
// document in Build's docs, and the index of the operation in it, or for
// the hop of its embedded policy the index's complement (^op). Eight bytes:
// a set has a hop for every operation.
type firstHop struct{ di, op int32 }

func (h firstHop) policy() bool { return h.op < 0 }

func (f *firsts) key(h firstHop) hopKey {
	d, i := f.docs[h.di], h.op
	if h.policy() {
		i = ^i
	}
	op := d.Operations.Items[i].Key.Value
	if h.policy() {
		return hopKey{boundary.Adapter, d.Policy.Service.Value, "", op}
	}
	return hopOf(d, op)
}

func (f *firsts) entryOf(k hopKey) entry {
	var h maphash.Hash
	h.SetSeed(f.seed)
	h.WriteString(string(k.kind))
	h.WriteByte(0)
	h.WriteString(k.from)
	h.WriteByte(0)
	h.WriteString(k.to)
	h.WriteByte(0)
	h.WriteString(k.op)
	return entry(h.Sum64())
}

// claim returns the document that defines k first; when none does yet,
// it records hop, whose key is k, as that definition and returns nil.
func (f *firsts) claim(k hopKey, hop firstHop) *Facts {
	e := f.entryOf(k)
	held, taken := f.byEntry[e]
	switch {
	case !taken:
		f.byEntry[e] = hop
		return nil
	case f.key(held) == k:
		return f.docs[held.di]
	}
	if prev, ok := f.collided[k]; ok {
		return prev
	}
	if f.collided == nil {
		f.collided = map[hopKey]*Facts{}
	}
	f.collided[k] = f.docs[hop.di]
	return nil
}

// duplicates records d as the first definition of each hop it defines
// for an operation (its own, and its embedded policy's), or as a Duplicate
// of the document already first for it (IDL211). It returns, by operation
// index, whether d is the first to define its own hop for the operation:
// whether chains may use it there.
func (b *builder) duplicates(di int32, first *firsts) []bool {
	d := b.docs[di]
	embedded := d.Policy != nil && d.Policy.Embedded && d.Policy.Service.OK()
	b.defines = slices.Grow(b.defines[:0], len(d.Operations.Items))[:len(d.Operations.Items)]
	for i, op := range d.Operations.Items {
		b.defines[i] = false
		if !op.Key.OK() {
			continue
		}
		// The operation's own hop, then its embedded policy's.
		hops := [2]firstHop{{di, int32(i)}, {di, ^int32(i)}}
		n := 1
		if embedded {
			n = 2
		}
		for _, hop := range hops[:n] {
			k := first.key(hop)
			prev := first.claim(k, hop)
			if prev != nil && prev != d {
				b.g.Duplicates = append(b.g.Duplicates, Duplicate{Doc: d, First: prev, Operation: op.Key.Value, Policy: k.kind == boundary.Adapter})
			}
			if !hop.policy() {
				b.defines[i] = prev == nil || prev == d
			}
		}
	}
	return b.defines
}

// Linkable reports whether d has the fields chains link by: from and to on
// an edge, service on an adapter. Without them it can be in no chain, and
// the schema check already says why.
func Linkable(d *Facts) bool {
	switch {
	case d.Kind.IsEdge():
		return d.From.Value != "" && d.To.Value != ""
	case d.Kind == boundary.Adapter:
		return d.Service.Value != ""
	}
	return false
}

// extend follows path, whose last hop is carried by last, to the first
// document that carries its operation next, and records the path as a
// chain where it can go no further. A hop where the operation fans out
// (a BFF sending it to two gateways) forks a chain for every other
// carrier the first time that carrier is met, so every document on some
// path is on a chain, and the number of chains stays within the number
// of browser operations plus carriers however often component ids recur.
// Kinds come in a fixed order, so a path has at most four hops.
func (b *builder) extend(path []Hop, last carrier) {
	for {
		b.onChain[last.di] = true
		hop := path[len(path)-1]
		if hop.Kind == boundary.Adapter {
			b.emit(path, nil)
			return
		}
		kind, at := next(hop.Kind), hop.Doc.To.Value
		if kind == boundary.Adapter && hop.Doc.Policy != nil && hop.Doc.Policy.Service.Value == at {
			// An embedded policy is this edge's adapter (docs/format.md,
			// Owner policy); a
			// standalone document for the same service is not reached here.
			path = append(path, Hop{Kind: kind, Doc: hop.Doc, Op: hop.Op})
			continue
		}
		r, key := rankOf(kind), hop.Op.Key.Value
		head, ok := b.heads[b.entryOf(r, at, key)]
		// The list runs from the last document indexed to the first.
		var buf [4]int32
		found := buf[:0]
		for i := head; ok && i >= 0; i = b.carriers[i].next {
			if b.is(b.carriers[i], r, at, key) {
				found = append(found, i)
			}
		}
		if len(found) == 0 {
			b.emit(path, &Stop{Next: kind, At: at, Lacking: b.starts[link{r, at}]})
			return
		}
		for _, i := range found[:len(found)-1] {
			if c := &b.carriers[i]; !c.forked {
				c.forked = true
				fork := append(path[:len(path):len(path)], b.hop(kind, *c))
				b.extend(fork, *c)
			}
		}
		b.carriers[found[len(found)-1]].forked = true
		last = b.carriers[found[len(found)-1]]
		path = append(path, b.hop(kind, last))
	}
}

func (b *builder) emit(path []Hop, stop *Stop) {
	if len(b.slab) == cap(b.slab) {
		b.slab = make([]Chain, 0, 256)
	}
	b.slab = append(b.slab, Chain{Hops: path, Stop: stop, keyHop: -1})
	c := &b.slab[len(b.slab)-1]
	for i, h := range path {
		if h.Doc.Idempotency.OK() {
			c.keyHop = i
			break
		}
	}
	b.g.Chains = append(b.g.Chains, c)
}

// compareChains orders chains by Name, then by the paths of their
// documents. A set sorts tens of thousands, so names are compared where
// they differ without building them: in the operation key, unless one key
// is the start of the other, and otherwise in names built on the stack.
func compareChains(a, b *Chain) int {
	opA, opB := a.Operation(), b.Operation()
	if n := min(len(opA), len(opB)); opA[:n] != opB[:n] {
		return cmp.Compare(opA, opB)
	}
	var nameA, nameB [160]byte
	if n := bytes.Compare(a.appendName(nameA[:0]), b.appendName(nameB[:0])); n != 0 {
		return n
	}
	for i := range min(len(a.Hops), len(b.Hops)) {
		if n := cmp.Compare(a.Hops[i].Doc.Path, b.Hops[i].Doc.Path); n != 0 {
			return n
		}
	}
	return cmp.Compare(len(a.Hops), len(b.Hops))
}

// StopReason says in words why an incomplete chain stops, e.g.
// `no gateway_to_adapter document has from "edge-gw"`; "" for a complete
// chain.
func (c *Chain) StopReason() string {
	s := c.Stop
	switch {
	case s == nil:
		return ""
	case len(s.Lacking) > 0:
		if len(s.Lacking) == 1 {
			return fmt.Sprintf("%s %s does not carry %q", s.Next, Hop{Kind: s.Next, Doc: s.Lacking[0]}.Endpoints(), c.Operation())
		}
		// A busy gateway may have thousands of edges: name a few.
		const named = 3
		var names []string
		for _, d := range s.Lacking[:min(len(s.Lacking), named)] {
			names = append(names, Hop{Kind: s.Next, Doc: d}.Endpoints())
		}
		rest := names[len(names)-1]
		if len(s.Lacking) > named {
			rest = fmt.Sprintf("%d more", len(s.Lacking)-named)
		} else {
			names = names[:len(names)-1]
		}
		return fmt.Sprintf("%s %s and %s do not carry %q", s.Next, strings.Join(names, ", "), rest, c.Operation())
	case s.Next != boundary.Adapter:
		return fmt.Sprintf("no %s document has from %q", s.Next, s.At)
	}
	if p := c.Last().Doc.Policy; p != nil {
		return fmt.Sprintf("no adapter policy has service %q (the policy embedded under \"adapter\" names service %q)", s.At, p.Service.Value)
	}
	return fmt.Sprintf("no adapter policy has service %q", s.At)
}
