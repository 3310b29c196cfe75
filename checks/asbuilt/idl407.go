package asbuilt

import (
	"fmt"
	"strings"

	"github.com/idemlint/idemlint/checks"
)

// IDL407 catches a binding between the boundary set and the deployment
// that does not hold: the other as-built rules then judge the wrong
// resources, or none.
var idl407 = &checks.Rule{
	ID:       "IDL407",
	Name:     "as-built-binding",
	Severity: checks.Warning,
	Requires: []checks.Input{Config, carried},
	Summary:  "an as_built entry names no resource read, an implicit binding is ambiguous, or a bound route is written for a write the hop does not declare",
	Doc: `The as-built rules judge a hop by the resources that realise it (spec
8.4): those an edge's as_built names, else those that route to the edge's
"to". When that binding does not hold, they judge nothing, silently:

- an as_built entry that names no resource read (a typo, a renamed route,
  a file not given to --as-built);
- an implicit binding that finds resources in several namespaces (a
  staging and a production VirtualService for one host): none is used, as
  idemlint cannot tell which one carries the hop;
- a bound route whose match names a state-changing method and whose path
  carries no operation of that method declared at the hop: a write the
  proxy is configured for and the boundary set does not know, so no rule
  looks at its retries or headers.

Reported at the as_built entry, at each ambiguous resource (the edge
related), or at the route's match.

Before (edge document):
  "as_built": [{"kind": "VirtualService", "name": "orders-gw"}]
After (the resource is named orders-gateway):
  "as_built": [{"kind": "VirtualService", "name": "orders-gateway"}]`,
	CheckSet: func(p *checks.SetPass) {
		d, c := Config.Of(p), carried.Of(p)
		for _, doc := range c.edges {
			b := c.bindings[doc]
			edge := fmt.Sprintf("%s %s -> %s", doc.Kind, doc.From.Value, doc.To.Value)
			for _, i := range b.Unmatched {
				ref := doc.AsBuilt.Items[i]
				if !ref.Kind.OK() || !ref.Name.OK() {
					continue // IDL002's
				}
				name := ref.Name.Value
				if ref.Namespace.OK() {
					name = ref.Namespace.Value + "/" + name
				}
				read, _ := d.Set.Counts()
				p.Report(doc, ref.Pos, "",
					"as_built names %s %s, which none of the as-built resources read (%d) is, so nothing realises the edge %s: correct the name, or give --as-built the file that holds it",
					ref.Kind.Value, name, read, edge)
			}
			for _, res := range b.Ambiguous {
				f := p.ReportAt(res.At.File, res.At.Line, res.At.Column, "",
					"%s routes to %s, as resources in %s do, so which realises the edge %s is ambiguous and none is held to it: name it in the edge's as_built",
					resourceName(res), doc.To.Value, namespaces(b.Ambiguous), edge)
				f.Relate(doc, doc.To.Pos, "the edge whose to the resources route to")
			}
			var ops []Operation
			for _, op := range doc.Operations.Items {
				if op.Method.OK() && op.Path.OK() {
					ops = append(ops, Operation{op.Method.Value, op.Path.Value})
				}
			}
			for _, s := range b.Strays(ops) {
				res := s.Route.Resource
				path := "every path"
				if s.Match.Path != nil {
					path = fmt.Sprintf("%s %q", s.Match.Path.Kind, s.Match.Path.Value)
				}
				f := p.ReportAt(s.Match.At.File, s.Match.At.Line, s.Match.At.Column, "",
					"%s routes %s on %s, but the edge %s it realises declares no %s operation there: declare the operation, or remove the route",
					resourceName(res), s.Match.Method.Value, path, edge, s.Match.Method.Value)
				f.Relate(doc, doc.Operations.Pos, "the operations the edge declares")
			}
		}
	},
}

// namespaces names the distinct namespaces of rs, in order.
func namespaces(rs []*Resource) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.Namespace] {
			seen[r.Namespace] = true
			out = append(out, fmt.Sprintf("%q", r.Namespace))
		}
	}
	return strings.Join(out, " and ")
}
