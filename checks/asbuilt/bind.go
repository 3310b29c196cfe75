package asbuilt

import (
	"github.com/idemlint/idemlint/checks/pathmatch"

	"slices"
	"strings"
)

// Binding resources to hops (docs/as-built.md, Binding resources to hops).
// The checks hand over what they
// know of a boundary edge (its "to", its as_built entries, its
// operations) and get the as-built hop of each operation.

// Ref is an edge document's as_built entry: a resource by kind, name
// and, when written, namespace (an API Gateway export: kind "ApiGateway"
// and its info.title).
type Ref struct {
	Kind, Name, Namespace string
}

// Binding is the resources that realise one edge.
type Binding struct {
	// To is the edge's "to"; empty for an explicit binding.
	To string
	// Explicit is a binding by the edge's as_built entries.
	Explicit  bool
	Resources []*Resource
	// Unmatched are the indexes of the as_built entries that name no
	// resource read (IDL407, at the entry).
	Unmatched []int
	// Ambiguous are the resources an implicit binding found in several
	// namespaces; none of them is bound (IDL407, at each).
	Ambiguous []*Resource
	// Traffic is the hop's: a route binds only where it applies.
	Traffic Traffic
}

// Bind binds an edge whose hop is traffic: by its as_built entries when
// it has the member (asBuilt not nil, even empty: then by nothing else),
// else each resource with a route to the backend named as the edge's
// "to" that applies to that traffic (a mesh-only VirtualService is not
// the browser's edge).
func (s *Set) Bind(to string, asBuilt []Ref, traffic Traffic) Binding {
	if asBuilt != nil {
		b := Binding{Explicit: true, Traffic: traffic}
		for i, ref := range asBuilt {
			found := false
			for _, res := range s.named[Ref{Kind: ref.Kind, Name: ref.Name}] {
				if ref.Namespace == "" || res.Namespace == ref.Namespace {
					found = true
					if !slices.Contains(b.Resources, res) {
						b.Resources = append(b.Resources, res)
					}
				}
			}
			if !found {
				b.Unmatched = append(b.Unmatched, i)
			}
		}
		return b
	}
	b := Binding{To: to, Traffic: traffic}
	var namespaces []string
	for _, res := range s.byBackend[to] {
		if res.Traffic&traffic == 0 {
			continue
		}
		b.Resources = append(b.Resources, res)
		if !slices.Contains(namespaces, res.Namespace) {
			namespaces = append(namespaces, res.Namespace)
		}
	}
	if len(namespaces) > 1 {
		b.Ambiguous, b.Resources = b.Resources, nil
	}
	return b
}

func (r *Route) sendsTo(backend string) bool {
	return slices.ContainsFunc(r.Backends, func(t Text) bool { return t.Value == backend })
}

// Hop is the as-built hop of one operation through one bound resource.
type Hop struct {
	Route *Route
	Match *Match // the condition that holds; nil for a route without any
	Retry Retry  // the route's retry for the operation's method
}

// Hops returns the hop of the operation through each bound resource that
// carries it: the route the platform picks (Resource.Select); for an
// implicit binding, only when that route sends to the edge's "to".
// Several hops are alternatives: each carries some of the requests, with
// its own retry.
func (b Binding) Hops(method, path string) []Hop {
	var out []Hop
	for _, res := range b.Resources {
		rt, m, ok := res.Select(method, path, b.Traffic)
		if !ok || (b.To != "" && !rt.sendsTo(b.To)) {
			continue
		}
		out = append(out, Hop{Route: rt, Match: m, Retry: rt.RetryFor(method)})
	}
	return out
}

// Operation is an operation a boundary edge declares.
type Operation struct {
	Method, Path string
}

// Stray is a match of a bound route that names a state-changing method
// explicitly and whose path carries none of the operations of that
// method declared at the hop: a route written for a write the boundary
// set does not know (IDL407, at the match).
type Stray struct {
	Route *Route
	Match *Match
}

// Strays are the bound routes' strays; for an implicit binding, of the
// routes that send to the edge's "to" only.
func (b Binding) Strays(ops []Operation) []Stray {
	var out []Stray
	for _, res := range b.Resources {
		for _, rt := range res.Routes {
			if b.To != "" && !rt.sendsTo(b.To) {
				continue
			}
			for i := range rt.Matches {
				m := &rt.Matches[i]
				if !res.carries(m, b.Traffic) {
					continue
				}
				if m.Method == nil || m.Method.Kind != pathmatch.Exact || !stateChanging(m.Method.Value) {
					continue
				}
				if !slices.ContainsFunc(ops, func(op Operation) bool {
					return strings.EqualFold(op.Method, m.Method.Value) && (m.Path == nil || m.Path.Overlaps(op.Path))
				}) {
					out = append(out, Stray{rt, m})
				}
			}
		}
	}
	return out
}

func stateChanging(method string) bool {
	switch method {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}
