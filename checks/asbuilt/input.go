package asbuilt

import (
	"fmt"
	"slices"
	"sync"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// This file is what the as-built rules (docs/as-built.md, Rules) read: the
// configuration
// read (Config, which the caller supplies) and, of the boundary sets, the hops
// each edge operation takes as built (hops), so a change of the typed
// model touches this file alone.

// Mesh says which mesh carries the hops that no resource binds (spec
// 8.1, "mesh").
type Mesh string

// The meshes: none, or Istio, whose default retry then applies to every
// bff_to_gateway and gateway_to_adapter hop no resource binds.
const (
	NoMesh    Mesh = "none"
	IstioMesh Mesh = "istio"
)

// Deployment is the as-built configuration a run holds the boundary sets
// to: the resources read, and the mesh.
type Deployment struct {
	// Set is what the files hold; of a Deployment Open returns, once
	// Wait returns (a run it is supplied to waits: Findings).
	Set  *Set
	Mesh Mesh
	// MeshAt is where the mesh is declared (Source.MeshAt).
	MeshAt Pos
	// Classes are the implementations of Gateway classes by name
	// (.idemlint.json as_built.classes).
	Classes map[string]ImplementationName
	wait    func() // the wait for the files Open reads; nil once Load read them
	// implemented applies Mesh and Classes to the Set once it is read.
	implemented sync.Once
}

// Config is the as-built configuration; without one the as-built rules
// do not run.
var Config = &checks.InputOf[*Deployment]{
	Name:    "as-built configuration",
	Scope:   "as-built",
	Missing: `"idemlint check --as-built PATH" gives one`,
}

// Findings waits for the files Open is still reading, if any, and
// returns the findings of those that could not be read and how many they
// are: a supplied Deployment is a checks.PendingInput, whose findings join
// the run's and whose unreadable files count as the set's do.
func (d *Deployment) Findings() ([]checks.Finding, int) {
	d.Wait()
	return d.Set.FileFindings(), len(d.Set.Errors)
}

// edgeOp is a state-changing operation of an edge document with the hops
// that carry it as built.
type edgeOp struct {
	doc  *chain.Facts
	op   *chain.Operation
	hops []Hop
	// meshDefault is set when no resource binds the edge and the mesh's
	// default retry carries the hop instead (mesh: istio).
	meshDefault *Retry
}

// name is how findings name the operation: "POST /api/orders (orders.create)".
func (e edgeOp) name() string {
	return fmt.Sprintf("%s %s (%s)", e.op.Method.Value, e.op.Path.Value, e.op.Key.Value)
}

// edge names the hop: "bff_to_gateway checkout-bff -> orders-gw".
func (e edgeOp) edge() string {
	return fmt.Sprintf("%s %s -> %s", e.doc.Kind, e.doc.From.Value, e.doc.To.Value)
}

// carriage is what carries each edge of a set as built, worked out once a
// set: the rules walk every chain, thousands of them, and chains share
// edges.
type carriage struct {
	// bindings are the bindings of the edge documents that name or are
	// bound to a resource; edges are those documents, in the set's order.
	bindings map[*chain.Facts]Binding
	edges    []*chain.Facts
	// ops are the as-built hops of each edge operation that some
	// resource carries.
	ops map[*chain.Operation][]Hop
	// meshDefault is the mesh's default retry of each edge that no
	// resource binds and the mesh retries (mesh: istio).
	meshDefault map[*chain.Facts]*Retry
}

// carried are the hops of every edge of the set as built.
var carried = &checks.InputOf[*carriage]{
	Name:   "as-built carriage",
	PerSet: true,
	Build: func(p *checks.InputPass) (*carriage, error) {
		d, err := Config.From(p)
		if err != nil {
			return nil, err
		}
		c := &carriage{bindings: map[*chain.Facts]Binding{}, ops: map[*chain.Operation][]Hop{}, meshDefault: map[*chain.Facts]*Retry{}}
		for _, doc := range p.Docs {
			if !doc.Kind.IsEdge() {
				continue
			}
			b := d.bind(doc)
			if r := d.meshDefault(doc, b); r != nil {
				c.meshDefault[doc] = r
			}
			if len(b.Unmatched)+len(b.Ambiguous)+len(b.Resources) == 0 {
				continue // most edges of a large set: kept out of the maps
			}
			c.bindings[doc] = b
			c.edges = append(c.edges, doc)
			for i := range doc.Operations.Items {
				op := &doc.Operations.Items[i]
				if !op.Method.OK() || !op.Path.OK() {
					continue
				}
				if hs := b.Hops(op.Method.Value, op.Path.Value); len(hs) > 0 {
					c.ops[op] = hs
				}
			}
		}
		return c, nil
	},
}

// routes are the as-built hops of the chain's hop h through the resources
// bound to its edge: none for a hop that is not an edge operation.
func (c *carriage) routes(h chain.Hop) []Hop {
	if h.Op == nil {
		return nil
	}
	return c.ops[h.Op]
}

// carries reports whether something carries an edge hop of ch as built:
// a chain it does not has nothing for the as-built rules to recompute.
func (c *carriage) carries(ch *chain.Chain) bool {
	if len(c.ops) == 0 && len(c.meshDefault) == 0 {
		return false
	}
	return slices.ContainsFunc(ch.Hops, func(h chain.Hop) bool {
		return h.Kind.IsEdge() && (len(c.routes(h)) > 0 || c.meshDefault[h.Doc] != nil)
	})
}

// hops are the state-changing operations of every edge of the set that
// something carries as built, and the hops that do: the operations no
// resource or mesh carries have nothing to judge.
var hops = &checks.InputOf[[]edgeOp]{
	Name:   "as-built hops",
	PerSet: true,
	Build: func(p *checks.InputPass) ([]edgeOp, error) {
		c, err := carried.From(p)
		if err != nil {
			return nil, err
		}
		if len(c.ops) == 0 && len(c.meshDefault) == 0 {
			return nil, nil
		}
		var out []edgeOp
		for _, doc := range p.Docs {
			if !doc.Kind.IsEdge() {
				continue
			}
			meshDefault := c.meshDefault[doc]
			for i := range doc.Operations.Items {
				op := &doc.Operations.Items[i]
				if !op.StateChanging || !op.Method.OK() || !op.Path.OK() {
					continue
				}
				if e := (edgeOp{doc: doc, op: op, hops: c.ops[op], meshDefault: meshDefault}); len(e.hops) > 0 || e.meshDefault != nil {
					out = append(out, e)
				}
			}
		}
		return out, nil
	},
}

// meshDefault is the mesh's default retry that carries the edge doc bound
// by b, reported where the mesh is declared (docs/as-built.md, Defaults are
// configuration); nil when a
// resource binds the edge, or no mesh retries its hop.
func (d *Deployment) meshDefault(doc *chain.Facts, b Binding) *Retry {
	if len(b.Resources) > 0 || len(b.Ambiguous) > 0 || d.Mesh != IstioMesh || doc.Kind == boundary.BrowserToBFF {
		return nil
	}
	r := d.Set.IstioDefaultRetry(d.meshAt(doc.Path))
	return &r
}

// bind binds an edge document (docs/as-built.md, Binding resources to
// hops): by its as_built entries when
// it has the member, else by its "to"; only to routes that apply to the
// hop's traffic.
func (d *Deployment) bind(doc *chain.Facts) Binding {
	d.Wait()
	traffic := AnyTraffic
	if doc.Kind == boundary.BrowserToBFF {
		// The browser's requests enter through a gateway.
		traffic = GatewayTraffic
	}
	if !doc.AsBuilt.Present() {
		return d.Set.Bind(doc.To.Value, nil, traffic)
	}
	refs := make([]Ref, len(doc.AsBuilt.Items))
	for i, r := range doc.AsBuilt.Items {
		refs[i] = Ref{Kind: r.Kind.Value, Name: r.Name.Value, Namespace: r.Namespace.Value}
	}
	return d.Set.Bind(doc.To.Value, refs, traffic)
}

// retries reports whether the edge document declares a retry of method.
func retries(doc *chain.Facts, method string) bool {
	r := doc.Retry
	if !r.Present() || !r.Enabled.Value {
		return false
	}
	return doc.ListsFold(r.Methods, method)
}

// origin names where a value comes from, for messages: a default by its
// id (its setting and source are in the defaults table and "idemlint
// explain ID"), else nothing.
func origin(o Origin) string {
	if o.Default == nil {
		return ""
	}
	return " (default " + o.Default.ID + ")"
}

// resourceName names a resource in messages: "VirtualService shop/orders".
func resourceName(res *Resource) string {
	if res.Namespace == "" {
		return res.Kind + " " + res.Name.Value
	}
	return res.Kind + " " + res.Namespace + "/" + res.Name.Value
}

// report reports a finding at an as-built place and relates the edge
// operation it breaks; a place in the edge document itself (a mesh's
// default when --mesh declared the mesh) is the operation's.
func report(p *checks.SetPass, at Pos, e edgeOp, related, format string, args ...any) {
	if at.File == e.doc.Path {
		p.Report(e.doc, e.op.Pos, "", format, args...)
		return
	}
	f := p.ReportAt(at.File, at.Line, at.Column, "", format, args...)
	f.Relate(e.doc, e.op.Pos, related)
}

// carrier is what retries an edge operation as built: a route bound to
// the edge, or the mesh's default retry of a hop no resource binds.
type carrier struct {
	retry Retry
	route *Route // nil for the mesh's default
}

// name names the carrier in messages.
func (c carrier) name() string {
	if c.route == nil {
		return "Istio's default retry (mesh istio)"
	}
	return resourceName(c.route.Resource)
}

// carriers are what retries the operation as built, one verdict for a
// default whether a route without retries or the mesh gives it.
func (e edgeOp) carriers() []carrier {
	out := make([]carrier, 0, len(e.hops)+1)
	for _, h := range e.hops {
		out = append(out, carrier{retry: h.Retry, route: h.Route})
	}
	if e.meshDefault != nil {
		out = append(out, carrier{retry: *e.meshDefault})
	}
	return out
}

// FileFindings are the IDL001 findings of the as-built files
// (docs/as-built.md, Reading the configuration: nothing is skipped
// silently): each file that could not be read or
// parsed, at that file, and each value read without being understood
// (Set.Problems), at that value.
func (s *Set) FileFindings() []checks.Finding {
	out := make([]checks.Finding, 0, len(s.Errors)+len(s.Problems))
	for _, e := range s.Errors {
		out = append(out, inputFinding(e.At, "cannot read this as-built file: "+e.Err.Error()))
	}
	// A cluster-wide configuration's value is judged once per route it
	// applies to: reported once.
	seen := make(map[Problem]bool, len(s.Problems)) // Used is set once per resource
	for _, p := range s.Problems {
		if seen[p] {
			continue
		}
		seen[p] = true
		if p.Used == nil {
			out = append(out, inputFinding(p.At, "as-built value not used: "+p.Message))
			continue
		}
		f := inputFinding(p.At, "as-built resource not used: "+p.Message)
		f.Related = []checks.Location{{File: p.Used.File, Line: p.Used.Line, Column: p.Used.Column, Message: "the definition used"}}
		out = append(out, f)
	}
	return out
}

func inputFinding(at Pos, message string) checks.Finding {
	return checks.Finding{Rule: checks.IDL001.ID, Severity: checks.IDL001.Severity, File: at.File,
		Line: at.Line, Column: at.Column, Message: message}
}
