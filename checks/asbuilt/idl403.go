package asbuilt

import (
	"slices"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/chain"
)

// IDL403 catches a proxy that resends writes no hop before it has made
// carry a key.
var idl403 = &checks.Rule{
	ID:       "IDL403",
	Name:     "as-built-resends-keyless",
	Severity: checks.Error,
	Requires: []checks.Input{Config, hops, checks.ChainGraph},
	Summary:  "a state-changing operation is resent after receipt as built while keyless requests can reach that hop",
	Doc: `The owner can tell a resent write from a new one only by its idempotency
key. When no hop up to a proxy (that proxy's own edge included) refuses a
request without the key (http_idempotency.require_key covering the
operation, with on_missing reject), keyless writes reach the proxy, and a
resend after receipt runs them twice. The key must be required before the
retry, or the retry made to depend on the key: an Envoy retry_policy whose
retriable_request_headers ask for the key header retries keyed requests
only, and is not reported.

Reported at the as-built retry condition that resends after receipt, the
edge's operation related, once per route and operation; a retry the edge
declares is judged here too (IDL401 judges undeclared ones).

Before: the browser edge requires no key, and the gateway retries 503.
After: require the key at the browser edge:
  "http_idempotency": {"require_key": {"methods": ["POST", "PUT", "PATCH", "DELETE"]},
    "on_missing": {"action": "reject", "status": 400, "error_code": "idempotency_key_required"}}`,
	CheckSet: func(p *checks.SetPass) {
		// Only the operations some bound route or the mesh resends: every other one
		// has nothing to report, and a set has thousands of them.
		byOp := map[*chain.Operation]edgeOp{}
		for _, e := range hops.Of(p) {
			if slices.ContainsFunc(e.carriers(), func(c carrier) bool { return c.retry.ResendsAfterReceipt() }) {
				byOp[e.op] = e
			}
		}
		if len(byOp) == 0 {
			return
		}
		type reported struct {
			route *Route
			op    *chain.Operation
		}
		seen := map[reported]bool{}
		for _, c := range checks.ChainGraph.Of(p).Chains {
			if !c.StateChanging() {
				continue
			}
			gated := false
			for _, h := range c.Hops {
				if !h.Kind.IsEdge() || h.Op == nil {
					continue
				}
				id := h.Doc.Idempotency
				gated = gated || h.Doc.Requires(h.Op) && id.OnMissing.Action.Value == "reject"
				e, ok := byOp[h.Op]
				if gated || !ok {
					continue
				}
				for _, hop := range e.carriers() {
					cond, resends := resend(hop.retry)
					if !resends || hop.retry.OnlyWith(c.KeyHeader()) || seen[reported{hop.route, h.Op}] {
						continue
					}
					seen[reported{hop.route, h.Op}] = true
					report(p, cond.From.At, e, "the edge operation no hop up to this one requires the key for",
						"%s: %s resends it after the upstream received it (on %s [%s]%s) while no hop up to %s rejects it without a key, so a resent keyless write runs twice: require the key (require_key with on_missing reject) at or before this hop",
						e.name(), hop.name(), cond, cond.Platform, origin(cond.From), e.edge())
				}
			}
		}
	},
}
