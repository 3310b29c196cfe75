package checks

import (
	"fmt"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL205 checks that the adapter requires the key for every state-changing
// operation that reaches it from a browser.
var idl205 = &Rule{
	ID:       "IDL205",
	Name:     "owner-requires-key",
	Severity: Error,
	Summary:  "the adapter requires the key for, and fingerprints, every state-changing operation reaching it from a browser",
	Doc: `The owner can deduplicate only requests it keys: every state-changing
operation that a chain carries from a browser to an adapter must be covered
by the adapter's http_idempotency.require_key (by method or by
operation_key). For a policy embedded in a gateway_to_adapter edge the
requirement is the edge's own http_idempotency. Otherwise a
request whose key was lost, or never sent, executes unguarded.

Split with IDL106: the fingerprint is declared once for the whole policy, so
a missing or empty idempotency_fingerprint is reported by IDL106 at the policy
itself; IDL205 reports the per-operation key requirement only a chain shows.

Fix: add the operation to require_key.operations, or its method to
require_key.methods.`,
	Requires: []Input{ChainGraph},
	CheckSet: func(p *SetPass) {
		r := newChainReporter(p)
		for _, c := range ChainGraph.Of(p).Chains {
			if !c.StateChanging() || !c.Complete() || c.Last().RequiresKey() {
				continue
			}
			why := "it reaches this adapter from a browser as a state-changing operation"
			if c.Last().Embedded() {
				why += " (this edge's http_idempotency governs the embedded policy)"
			}
			r.unrequired(c, c.Last(), fmt.Sprintf("add %q to require_key.operations or %s to require_key.methods", c.Operation(), c.Last().Op.Method.Value), why)
		}
	},
}

// unrequired reports that hop h does not require the key for c's
// operation: at its require_key, which fix says how to extend, or where the
// missing require_key or http_idempotency belongs.
func (r *chainReporter) unrequired(c *chain.Chain, h chain.Hop, fix, why string) *Finding {
	idem := &h.Doc.Idempotency
	switch {
	case idem.State == boundary.Absent:
		if !h.Doc.StateChanging() { // else the schema requires it
			return r.missing(c, h.Doc, h.Doc.Root.Pos, "http_idempotency", fmt.Sprintf("add http_idempotency whose require_key covers %q: %s", c.Operation(), why))
		}
	case idem.RequireKey.OK():
		return r.at(c, h.Doc, idem.RequireKey.Pos, fix+": "+why)
	case idem.OK() && idem.RequireKey.State == boundary.Absent: // else not an object, which the schema reports
		return r.missing(c, h.Doc, idem.Pos, "require_key", fmt.Sprintf("add require_key covering %q: %s", c.Operation(), why))
	}
	return nil
}
