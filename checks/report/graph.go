package report

// This file draws the chains of boundary sets ("idemlint graph"): a table per
// chain, or a Mermaid or Graphviz diagram.

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// GraphFormats are the formats Graph writes: a table per chain for people, and
// diagrams to paste into a pull request (Mermaid) or render with Graphviz.
var GraphFormats = []string{"text", "mermaid", "dot"}

// CheckGraphFormat refuses a format that is none of GraphFormats.
func CheckGraphFormat(format string) error {
	if !slices.Contains(GraphFormats, format) {
		return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(GraphFormats, ", "))
	}
	return nil
}

// Graph writes the picture of g's state-changing chains in format, one of
// GraphFormats: each hop with the fate of the key there, broken hops marked.
// Read-only operations carry no key to follow; the text format names them.
func Graph(w io.Writer, g *chain.Graph, format string) error {
	return Graphs(w, []SetGraph{{Graph: g}}, format)
}

// SetGraph is the chain graph of one boundary set, named as the
// configuration's "sets" name it ("" for the files in none).
type SetGraph struct {
	Name  string
	Graph *chain.Graph
	// HopNote, when set, says what the hop at index i of a chain does as
	// built ("" for nothing): the text format lists the notes under the
	// chain's table, the diagrams add them to the hop's edge label.
	HopNote func(c *chain.Chain, i int) string
}

// Graphs is Graph for several sets: text blocks one after another, and one
// diagram holding a cluster (Graphviz) or subgraph (Mermaid) per set whose
// node ids are unique across the sets, so the output pastes as one picture.
// One set draws exactly as Graph.
func Graphs(w io.Writer, sets []SetGraph, format string) error {
	if err := CheckGraphFormat(format); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	switch format {
	case "text":
		for i, s := range sets {
			if i > 0 {
				fmt.Fprintln(bw)
			}
			writeText(bw, s.Graph, s.HopNote)
		}
	case "mermaid":
		drawAll(sets).writeMermaid(bw)
	case "dot":
		drawAll(sets).writeDOT(bw)
	}
	return bw.Flush()
}

// writeText writes one block per chain:
//
//	orders.create: web -> checkout-bff -> edge-gw -> orders-adapter  (key x-idempotency-key)  BROKEN
//	  browser_to_bff      web -> checkout-bff        required   01-browser-to-bff.json:7:5
//	  bff_to_gateway      checkout-bff -> edge-gw    forwarded  02-bff-to-gateway.json:7:5
//	  gateway_to_adapter  edge-gw -> orders-adapter  DROPPED    03-gateway-to-adapter.json:8:5  header_to_allow_outbound lacks x-idempotency-key
//	  adapter             orders-adapter             owned      04-adapter.json:7:5
//
// With hopNote, each hop it says something of is listed under the table:
//
//	as built, bff_to_gateway checkout-bff -> edge-gw: istio VirtualService shop/edge-gw retries up to 3 attempts in all on 503 (default: istio.retries)
func writeText(w io.Writer, g *chain.Graph, hopNote func(c *chain.Chain, i int) string) {
	var shown, broken int
	var readOnly []string
	for _, c := range g.Chains {
		if !c.StateChanging() {
			// Chains are sorted by name, which starts with the operation,
			// so one operation's chains are adjacent.
			if n := len(readOnly); n == 0 || readOnly[n-1] != c.Operation() {
				readOnly = append(readOnly, c.Operation())
			}
			continue
		}
		if shown > 0 {
			fmt.Fprintln(w)
		}
		shown++
		status := ""
		if c.Broken() {
			broken++
			status = "  BROKEN"
		}
		fmt.Fprintf(w, "%s  (key %s)%s\n", c.Name(), c.KeyHeader(), status)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for i, h := range c.Hops {
			f := c.FateAt(i)
			fate, detail := f.Fate.String(), ""
			if f.Fate.Broken() {
				fate, detail = strings.ToUpper(fate), "\t"+f.Detail(c.KeyHeader())
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s%s\n", h.Kind, hopEndpoints(h), fate, hopLocation(h), detail)
		}
		tw.Flush()
		for i, h := range c.Hops {
			if hopNote != nil {
				if note := hopNote(c, i); note != "" {
					fmt.Fprintf(w, "  as built, %s %s: %s\n", h.Kind, hopEndpoints(h), note)
				}
			}
		}
		if !c.Complete() {
			fmt.Fprintf(w, "  STOPS: %s\n", c.StopReason())
		}
	}
	if shown > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%s, %d broken\n", Plural(shown, "state-changing chain"), broken)
	if len(readOnly) > 0 {
		fmt.Fprintf(w, "read-only operations, not shown: %s\n", strings.Join(readOnly, ", "))
	}
}

// hopEndpoints is Endpoints, marking a policy embedded in its edge.
func hopEndpoints(h chain.Hop) string {
	if h.Embedded() {
		return h.Endpoints() + " (embedded)"
	}
	return h.Endpoints()
}

// hopLocation is file:line:column of the hop's operation, or of the policy
// object for an embedded policy (its operation is the edge's).
func hopLocation(h chain.Hop) string {
	at := h.Op.Pos
	if h.Embedded() {
		at = h.Doc.Policy.Pos
	}
	pl := h.Doc.Place(at)
	return fmt.Sprintf("%s:%d:%d", h.Doc.Path, pl.Line, pl.Column)
}

// diagram is the picture of every set: one cluster per set when there are
// several, numbering nodes on from one set to the next.
type diagram struct {
	sets    []SetGraph
	columns []*picture
}

func drawAll(sets []SetGraph) *diagram {
	d := &diagram{sets: sets}
	nodes := 0
	for _, s := range sets {
		p := draw(s.Graph, s.HopNote, nodes)
		nodes += len(p.nodes)
		d.columns = append(d.columns, p)
	}
	return d
}

// clustered reports whether the sets are drawn as clusters: only when there
// are several, so that one set draws as it always has.
func (d *diagram) clustered() bool { return len(d.sets) > 1 }

// setLabel names set i in its cluster.
func (d *diagram) setLabel(i int) string {
	if d.sets[i].Name == "" {
		return "files in no set"
	}
	return "set " + d.sets[i].Name
}

// picture is the diagram of the state-changing chains of one set:
// component, policy and "missing document" nodes, and one edge per hop
// document and fate, labelled with the operations that share it, so that
// many operations through one gateway draw one arrow, not many.
type picture struct {
	firstID int // the number of the first node's id
	nodes   []node
	edges   []edge
	ids     map[string]int // node key -> index in nodes
	edgeAt  map[edgeKey]int
}

type nodeShape uint8

const (
	componentNode nodeShape = iota
	policyNode
	missingNode
)

type node struct {
	id, label string
	shape     nodeShape
}

type edgeKey struct {
	from, to, doc, fate string
}

type edge struct {
	from, to string
	ops      []string
	fate     string
	broken   bool
	stop     bool // the chain stops here: drawn dashed
}

func (e edge) label() string { return strings.Join(e.ops, ", ") + ": " + e.fate }

// draw pictures g, numbering its node ids from firstID; hopNote, when
// set, adds what a hop does as built to its edge's label.
func draw(g *chain.Graph, hopNote func(c *chain.Chain, i int) string, firstID int) *picture {
	p := &picture{firstID: firstID, ids: map[string]int{}, edgeAt: map[edgeKey]int{}}
	for _, c := range g.Chains {
		if !c.StateChanging() {
			continue
		}
		for i, h := range c.Hops {
			f := c.FateAt(i)
			fate := f.Fate.String()
			for j, l := range f.Drops {
				sep := ", "
				if j == 0 {
					sep = " at "
				}
				fate += sep + l.Field
			}
			if hopNote != nil {
				if note := hopNote(c, i); note != "" {
					fate += "; as built: " + note
				}
			}
			if h.Kind == boundary.Adapter {
				p.add(c.Operation(), p.component(h.Doc.Policy.Service.Value), p.policy(h.Doc), h.Doc.Path, fate, f.Fate.Broken(), false)
				continue
			}
			p.add(c.Operation(), p.component(h.Doc.From.Value), p.component(h.Doc.To.Value), h.Doc.Path, fate, f.Fate.Broken(), false)
		}
		if s := c.Stop; s != nil {
			p.add(c.Operation(), p.component(s.At), p.missing(s), "", "stops", true, true)
		}
	}
	return p
}

// add records that op crosses the edge from -> to of document doc with the
// given fate.
func (p *picture) add(op, from, to, doc, fate string, broken, stop bool) {
	k := edgeKey{from, to, doc, fate}
	i, ok := p.edgeAt[k]
	if !ok {
		i = len(p.edges)
		p.edgeAt[k] = i
		p.edges = append(p.edges, edge{from: from, to: to, fate: fate, broken: broken, stop: stop})
	}
	// Chains come sorted by name, which starts with the operation: one
	// operation's additions are adjacent, and the labels come out sorted.
	if e := &p.edges[i]; len(e.ops) == 0 || e.ops[len(e.ops)-1] != op {
		e.ops = append(e.ops, op)
	}
}

func (p *picture) node(key, label string, shape nodeShape) string {
	if i, ok := p.ids[key]; ok {
		return p.nodes[i].id
	}
	id := fmt.Sprintf("n%d", p.firstID+len(p.nodes))
	p.ids[key] = len(p.nodes)
	p.nodes = append(p.nodes, node{id: id, label: label, shape: shape})
	return id
}

func (p *picture) component(name string) string {
	return p.node("component\x00"+name, name, componentNode)
}

// policy is the node of the owner policy in doc; one per document, as one
// service may have several policy documents.
func (p *picture) policy(doc *chain.Facts) string {
	label := doc.Policy.Service.Value + " policy"
	if doc.Policy.Embedded {
		label += " (embedded in " + doc.From.Value + " -> " + doc.To.Value + ")"
	}
	return p.node("policy\x00"+doc.Path, label, policyNode)
}

// missing is the node of what a stopping chain lacks: a document of the
// next kind at its last component, or one there that carries its operation.
func (p *picture) missing(s *chain.Stop) string {
	label := "no " + string(s.Next) + " from " + s.At
	if s.Next == boundary.Adapter {
		label = "no adapter policy for " + s.At
	}
	if len(s.Lacking) > 0 {
		label += " carries it"
	}
	return p.node("missing\x00"+label, label, missingNode)
}

func (d *diagram) writeMermaid(w io.Writer) {
	fmt.Fprintln(w, "flowchart LR")
	esc := strings.NewReplacer(`"`, "#quot;").Replace
	var broken []string
	edges, missing := 0, false
	for i, p := range d.columns {
		indent := "  "
		if d.clustered() {
			fmt.Fprintf(w, "  subgraph s%d[\"%s\"]\n", i, esc(d.setLabel(i)))
			indent = "    "
		}
		for _, n := range p.nodes {
			switch n.shape {
			case componentNode:
				fmt.Fprintf(w, "%s%s[\"%s\"]\n", indent, n.id, esc(n.label))
			case policyNode:
				fmt.Fprintf(w, "%s%s[(\"%s\")]\n", indent, n.id, esc(n.label))
			case missingNode:
				fmt.Fprintf(w, "%s%s[\"%s\"]:::missing\n", indent, n.id, esc(n.label))
				missing = true
			}
		}
		for _, e := range p.edges {
			arrow := "-->"
			if e.stop {
				arrow = "-.->"
			}
			fmt.Fprintf(w, "%s%s %s|\"%s\"| %s\n", indent, e.from, arrow, esc(e.label()), e.to)
			if e.broken {
				// linkStyle counts the links of the whole flowchart.
				broken = append(broken, fmt.Sprint(edges))
			}
			edges++
		}
		if d.clustered() {
			fmt.Fprintln(w, "  end")
		}
	}
	if len(broken) > 0 {
		fmt.Fprintf(w, "  linkStyle %s stroke:red,stroke-width:2px,color:red\n", strings.Join(broken, ","))
	}
	if missing {
		fmt.Fprintln(w, "  classDef missing stroke:red,stroke-dasharray:4 4,color:red")
	}
}

func (d *diagram) writeDOT(w io.Writer) {
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace
	fmt.Fprintln(w, "digraph idemlint {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, "  node [shape=box];")
	for i, p := range d.columns {
		indent := "  "
		if d.clustered() {
			fmt.Fprintf(w, "  subgraph cluster_%d {\n", i)
			fmt.Fprintf(w, "    label=\"%s\";\n", esc(d.setLabel(i)))
			indent = "    "
		}
		for _, n := range p.nodes {
			attrs := ""
			switch n.shape {
			case policyNode:
				attrs = ", shape=cylinder"
			case missingNode:
				attrs = ", style=dashed, color=red, fontcolor=red"
			}
			fmt.Fprintf(w, "%s%s [label=\"%s\"%s];\n", indent, n.id, esc(n.label), attrs)
		}
		for _, e := range p.edges {
			attrs := ""
			if e.broken {
				attrs = ", color=red, fontcolor=red, penwidth=2"
			}
			if e.stop {
				attrs += ", style=dashed"
			}
			fmt.Fprintf(w, "%s%s -> %s [label=\"%s\"%s];\n", indent, e.from, e.to, esc(e.label()), attrs)
		}
		if d.clustered() {
			fmt.Fprintln(w, "  }")
		}
	}
	fmt.Fprintln(w, "}")
}
