package checks

import (
	"fmt"
	"strings"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL214 checks that the headers the owner reads tenant and actor from
// reach it, as IDL202 does for the key.
var idl214 = &Rule{
	ID:       "IDL214",
	Name:     "scope-headers-survive-chain",
	Severity: Error,
	Summary:  "the headers the owner reads tenant_id and actor_id from are allowed inbound and outbound at every hop from where they are set",
	Doc: `The owner reads the tenant_id and actor_id parts of its idempotency_scope
from request headers (scope_sources, default "x-tenant-id" and "x-actor-id"),
and a request without one has the empty value. A hop that drops such a header
puts every tenant (or actor) in one scope: the adapter then replays one
tenant's stored response to another tenant who sent the same key, and the
adapter alone, probed directly, shows nothing wrong.

For each chain of a state-changing operation whose owner's idempotency_scope
holds tenant_id or actor_id, each header those parts are read from must pass
every allowlist from where it is set to the owner. It is set by the nearest
edge upstream of the owner that names it in sets_headers (a BFF deriving the
tenant from the session sets it on bff_to_gateway): from there it must pass
that edge's header_to_allow_inbound and every list after it. When no edge
sets it, the browser sends it, and it must also pass cors_allowed_headers
and header_to_allow_inbound of the browser edge. Names compare
case-insensitively and "*" allows all.

Reported at every list that drops such a header, once however many chains
cross it, with the owner's scope part as a related location. A list that is
missing altogether drops the key as well: where IDL102 reports it, this
finding names it as a related location.

Fix: add the header to the list the message names, or declare it in
sets_headers of the hop that derives it.`,
	Requires: []Input{ChainGraph},
	CheckSet: func(p *SetPass) {
		r := newChainReporter(p)
		for _, c := range ChainGraph.Of(p).Chains {
			if !c.StateChanging() || !c.Complete() {
				continue
			}
			owner := c.Last().Doc
			var parts [2]scopeHeader
			for _, s := range scopeHeaders(owner.Policy, &parts) {
				from := scopeHeaderSource(c, s.header)
				for i, h := range c.Hops[max(from, 0):] {
					for _, l := range h.Drops(s.header) {
						if i == 0 && from >= 0 && l.Field != "header_to_allow_inbound" {
							continue // set past the setting side's own lists
						}
						var f *Finding
						switch l.Headers.State {
						case boundary.Valid:
							f = r.at(c, h.Doc, l.Headers.Pos, fmt.Sprintf("add %q, which %s is read from, to %s: this hop drops it, and every %s shares one idempotency scope", s.header, s.part, l.Field, s.who))
						case boundary.Absent: // else it is not an array, which the schema reports
							f = r.missing(c, h.Doc, h.Doc.Root.Pos, l.Field, fmt.Sprintf("add %s with %q: without it this hop drops the header %s is read from, and every %s shares one idempotency scope", l.Field, s.header, s.part, s.who))
							// A missing list drops the key too: when IDL102
							// reports it, the findings are linked.
							p.Overlap(f, idl102)
						}
						relate(f, owner, s.at, fmt.Sprintf("the owner's idempotency_scope holds %s, read from %s", s.part, s.header))
					}
				}
			}
		}
	},
}

// scopeHeader is a header the owner reads a part of its scope from.
type scopeHeader struct {
	part   string       // "tenant_id" or "actor_id"
	who    string       // whose records the part keeps apart: "tenant"
	header string       // where it is read from (scope_sources)
	at     boundary.Pos // the part in idempotency_scope
}

// scopeHeaders lists the headers pol reads the tenant_id and actor_id of
// its scope from, for the parts its scope holds; one header read for both
// is listed once. They go in buf: every chain asks.
func scopeHeaders(pol *chain.Policy, buf *[2]scopeHeader) []scopeHeader {
	if pol == nil {
		return nil
	}
	out := buf[:0]
	for _, part := range [...]scopeHeader{
		{part: "tenant_id", who: "tenant", header: pol.ScopeSources.TenantHeader()},
		{part: "actor_id", who: "actor", header: pol.ScopeSources.ActorHeader()},
	} {
		at, ok := scopePart(pol.Scope, part.part)
		if !ok {
			continue // the scope lacks the part (IDL107 reports it)
		}
		if len(out) == 1 && strings.EqualFold(out[0].header, part.header) {
			continue
		}
		part.at = at
		out = append(out, part)
	}
	return out
}

// scopePart returns where idempotency_scope names part.
func scopePart(scope boundary.StringList, part string) (boundary.Pos, bool) {
	for _, item := range scope.Items {
		if item.OK() && item.Value == part {
			return item.Pos, true
		}
	}
	return boundary.NoPos, false
}

// scopeHeaderSource returns the index in c of the nearest edge upstream of
// the owner that sets header (sets_headers), or -1 when none does and the
// browser sends it.
func scopeHeaderSource(c *chain.Chain, header string) int {
	for i := len(c.Hops) - 1; i >= 0; i-- {
		h := c.Hops[i]
		if h.Doc.ListsFold(h.Doc.SetsHeaders, header) && h.Kind.IsEdge() {
			return i
		}
	}
	return -1
}
