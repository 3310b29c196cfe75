package checks

import (
	"fmt"
)

// IDL209 checks that a gateway and the adapter it reaches agree on the
// contract version.
var idl209 = &Rule{
	ID:       "IDL209",
	Name:     "contract-version-agrees",
	Severity: Error,
	Summary:  "contract_version agrees between a gateway_to_adapter edge and the adapter policy it reaches",
	Doc: `contract_version is part of the idempotency scope: the adapter keys its
records by it, so that a key reused across an incompatible contract change
does not replay a response of the old contract. The gateway_to_adapter edge
states the version it calls; if the adapter policy says another, one of the
two documents describes a deployment that no longer exists. (A policy
embedded in the edge shares the edge's contract_version.)

Fix: set the edge's contract_version to the adapter's, or update the
adapter policy.`,
	Requires: []Input{ChainGraph},
	CheckSet: func(p *SetPass) {
		r := newChainReporter(p)
		for _, c := range ChainGraph.Of(p).Chains {
			if !c.Complete() || c.Last().Embedded() {
				continue
			}
			edge, adapter := c.Hops[len(c.Hops)-2].Doc, c.Last().Doc
			ev, av := edge.ContractVersion, adapter.ContractVersion
			if !ev.OK() || !av.OK() || ev.Value == "" || av.Value == "" || ev.Value == av.Value {
				continue // a missing one is the schema's finding
			}
			r.at(c, edge, ev.Pos, fmt.Sprintf("set contract_version to %q, the version of %s, or update that policy: the version is part of the idempotency scope", av.Value, c.Last()))
		}
	},
}
