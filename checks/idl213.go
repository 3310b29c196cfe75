package checks

import (
	"fmt"
)

// IDL213 checks that a waiting duplicate gives up before its caller does.
var idl213 = &Rule{
	ID:       "IDL213",
	Name:     "wait-below-upstream-timeout",
	Severity: Warning,
	Summary:  "with inflight wait, wait_timeout_ms is below the smallest http_retry.per_try_timeout_ms upstream on the chain",
	Doc: `With "policy": "wait", a duplicate that arrives while the first attempt
runs is held until that attempt finishes or wait_timeout_ms passes. Every hop
upstream that retries gives each attempt per_try_timeout_ms. If the adapter
waits longer than an upstream hop's per-try timeout, that hop gives up on the
waiting duplicate and sends another, which waits too: waiters stack up on
the slowest requests, each holding a connection, exactly when the adapter is
already slow.

Reported (as a warning) at the policy's wait_timeout_ms when it is not below
the smallest per_try_timeout_ms declared by an edge of the chain, with that
edge as a related location.

Fix: lower wait_timeout_ms below the smallest upstream per-try timeout, or
answer duplicates at once with "policy": "reject".`,
	Requires: []Input{ChainGraph},
	CheckSet: func(p *SetPass) {
		r := newChainReporter(p)
		for _, c := range ChainGraph.Of(p).Chains {
			if !c.Complete() {
				continue
			}
			pol := c.Last().Doc.Policy
			if pol == nil || pol.Inflight.Policy.Value != "wait" || !pol.Inflight.WaitTimeoutMS.OK() {
				continue
			}
			wait := pol.Inflight.WaitTimeoutMS
			tightest := -1
			for i, h := range c.Hops {
				t := h.Doc.Retry.PerTryTimeoutMS
				if h.Kind.IsEdge() && t.OK() && (tightest < 0 || t.Value < c.Hops[tightest].Doc.Retry.PerTryTimeoutMS.Value) {
					tightest = i
				}
			}
			if tightest < 0 {
				continue
			}
			edge := c.Hops[tightest]
			limit := edge.Doc.Retry.PerTryTimeoutMS
			if wait.Value < limit.Value {
				continue
			}
			f := r.at(c, c.Last().Doc, wait.Pos, fmt.Sprintf("lower wait_timeout_ms below %d, the per-try timeout of %s: with %d a caller retries while its first duplicate still waits, and waiters stack up", limit.Value, edge, wait.Value))
			relate(f, edge.Doc, limit.Pos, "the smallest per-try timeout upstream")
		}
	},
}
