package asbuilt

import (
	"slices"
	"strings"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/chain"
)

// IDL404 catches a proxy that drops the key, or a header the owner reads
// the tenant or actor from, between two hops that both allow it.
var idl404 = &checks.Rule{
	ID:       "IDL404",
	Name:     "as-built-drops-key",
	Severity: checks.Error,
	Requires: []checks.Input{Config, carried, checks.ChainGraph},
	Summary:  "the key header, or a header a scope part is read from, is removed or not forwarded as built while the edge allows it",
	Doc: `The boundary documents of two hops can both allow the idempotency key and
the proxy between them still drop it: an HTTPRoute RequestHeaderModifier
remove, an Istio headers.request.remove, a configuration-snippet
"proxy_set_header KEY "";", an API Gateway REST http integration that maps
other headers but not the key, or ingress-nginx dropping a header whose name
holds "_" (its default). Without the key the owner refuses the request or,
worse, cannot tell a retry from a new request. The headers the owner reads
tenant_id and actor_id from (scope_sources) are guarded alike:
without them every tenant shares one scope.

Reported at the removal (or at the integration, or at the route when a
default drops it), once per route and header, the edge operation related.

Before (Gateway API):
  filters:
  - type: RequestHeaderModifier
    requestHeaderModifier: {remove: [x-idempotency-key]}
After: remove the entry (or the filter).`,
	CheckSet: func(p *checks.SetPass) {
		routes := carried.Of(p)
		type reported struct {
			route  *Route
			header string
		}
		seen := map[reported]bool{}
		for _, c := range checks.ChainGraph.Of(p).Chains {
			if !c.StateChanging() || !routes.carries(c) {
				continue
			}
			var headers []guardedHeader // of the first hop carried as built
			for _, h := range c.Hops {
				if !h.Kind.IsEdge() || h.Op == nil || !h.Op.Method.OK() || !h.Op.Path.OK() {
					continue
				}
				asBuilt := routes.routes(h)
				if len(asBuilt) > 0 && headers == nil {
					headers = guarded(c)
				}
				e := edgeOp{doc: h.Doc, op: h.Op}
				for _, hop := range asBuilt {
					for _, header := range headers {
						if !h.Doc.Allows(h.Doc.HeaderAllowInbound, header.name) {
							continue // the edge drops it itself: IDL202's
						}
						from, dropped := hop.Route.Drops(header.name)
						key := reported{hop.Route, strings.ToLower(header.name)}
						if !dropped || seen[key] {
							continue
						}
						seen[key] = true
						res := hop.Route.Resource
						report(p, from.At, e, "the boundary edge that allows "+header.name,
							"%s: %s does not forward %s (%s)%s, though the edge %s allows it: forward it",
							e.name(), resourceName(res), header.name, header.why, origin(from), e.edge())
					}
				}
			}
		}
	},
}

// guardedHeader is a header a chain needs at its owner, and why.
type guardedHeader struct{ name, why string }

// guarded are the chain's key header and the headers its owner reads a
// scope part from (docs/format.md, Scope headers: tenant and actor).
func guarded(c *chain.Chain) []guardedHeader {
	out := []guardedHeader{{c.KeyHeader(), "the idempotency key"}}
	if !c.Complete() {
		return out
	}
	pol := c.Last().Doc.Policy
	if pol == nil {
		return out
	}
	scope := pol.Scope.Values()
	if slices.Contains(scope, "tenant_id") {
		out = append(out, guardedHeader{pol.ScopeSources.TenantHeader(), "the tenant the owner scopes keys by"})
	}
	if slices.Contains(scope, "actor_id") {
		out = append(out, guardedHeader{pol.ScopeSources.ActorHeader(), "the actor the owner scopes keys by"})
	}
	return out
}
