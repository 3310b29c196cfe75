package checks

import (
	"fmt"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL202 checks that no allowlist along a chain drops the chain's key
// header. It leaves to IDL102 what one document shows on its own.
var idl202 = &Rule{
	ID:       "IDL202",
	Name:     "key-survives-chain",
	Severity: Error,
	Summary:  "along each chain the key header is allowed outbound and inbound at every hop",
	Doc: `The key the browser sends must reach the adapter: every allowlist it crosses
must let the chain's key header through. The chain's key header is the one its
browser_to_bff edge declares (http_idempotency.header, default
"x-idempotency-key"); names compare case-insensitively and "*" allows all.
The lists crossed are cors_allowed_headers and header_to_allow_inbound on the
browser edge, header_to_allow_outbound and header_to_allow_inbound on the BFF
and gateway edges, and the adapter document's header_to_allow_inbound when it
declares one. A proxy that strips the header turns every retry downstream of
it into a second execution.

Reported at every list that drops the chain's key, once however many chains
cross it. IDL102 judges each edge's own lists against the header that edge
declares; where it reports the same list, this finding names it as a related
location, and turning either rule off leaves the other's finding in place.
Only the chain shows the rest: a list of an edge that declares another key
header than the chain's (IDL203 reports the differing name), of an edge that
declares the operation read-only, and the adapter's optional inbound list.

Fix: add the chain's key header to the list the message names.`,
	Requires: []Input{ChainGraph},
	CheckSet: func(p *SetPass) {
		r := newChainReporter(p)
		for _, c := range ChainGraph.Of(p).Chains {
			if !c.StateChanging() {
				continue
			}
			for _, h := range c.Hops {
				for _, l := range h.Drops(c.KeyHeader()) {
					var f *Finding
					switch l.Headers.State {
					case boundary.Valid:
						f = r.at(c, h.Doc, l.Headers.Pos, fmt.Sprintf("add %q, the chain's key header, to %s: this hop drops it", c.KeyHeader(), l.Field))
					case boundary.Absent: // else it is not an array, which the schema reports
						f = r.missing(c, h.Doc, h.Doc.Root.Pos, l.Field, fmt.Sprintf("add %s with %q: without it this hop drops the chain's key header", l.Field, c.KeyHeader()))
					}
					// IDL102 judges the same list against the edge's own
					// header: when it reports it too, the findings are linked.
					p.Overlap(f, idl102)
				}
			}
		}
	},
}
