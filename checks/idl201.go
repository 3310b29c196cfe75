package checks

import (
	"fmt"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL201 follows every state-changing operation of a browser edge to an
// adapter policy. The chain graph records where each path stops; this rule
// says so at the last document the path reached.
var idl201 = &Rule{
	ID:       "IDL201",
	Name:     "chain-complete",
	Severity: Error,
	Summary:  "every state-changing browser operation reaches an adapter policy through a complete chain",
	Doc: `Documents link into chains: an edge's "to" is the next edge's "from", an
adapter's "service" is the "to" of a gateway_to_adapter edge (or the policy is
embedded in that edge under "adapter"), and an operation goes on only through
documents that list its operation_key. A state-changing operation that the
browser edge accepts but no chain carries to an adapter policy has no owner:
nothing deduplicates it, and the other chain rules cannot see its path.
Every path the operation can take must end at a policy: a BFF that sends it
to two gateways needs both to carry it on.

Reported at the operation in the last document the path reached, saying why
the path stops there. When the value that breaks the link is a likely typo of
one that would let the chain go on (at most two edits, fewer than half its
length: "edge-gwy" for "edge-gw", "orders.crate" for "orders.create"), it is
reported at that value too, with the suggestion, and the findings the break
causes (this one, and IDL210 at the documents left out) name it as related.
Which of two spellings is the typo: an operation_key, the one downstream (the
browser edge names the operation); a component id, the one fewer linking
fields of the set hold, or the "to" where the chain breaks when they tie. When some file of the set cannot be read or linked (it
is not JSON, or lacks its kind, "from", "to" or "service"; IDL001 and IDL002
say so) the finding says how many: one of them may be the missing hop.

Fix: add the operation to the next hop's document, add the missing document,
or correct the "from", "to" or "service" that does not match.`,
	Requires: []Input{ChainGraph, chainTypos},
	CheckSet: func(p *SetPass) {
		graph := ChainGraph.Of(p)
		r := newChainReporter(p)
		note := missingHopNote(graph)
		typos := chainTypos.Of(p).byChain
		for _, c := range graph.Chains {
			if !c.StateChanging() || c.Complete() {
				continue
			}
			last := c.Last()
			f := r.at(c, last.Doc, last.Op.Key.Pos, "the chain stops here: "+c.StopReason()+"; "+stopFix(c)+note)
			if t := typos[c]; t != nil {
				relate(r.at(c, t.doc, t.at, t.message(c)), t.match, t.matchAt, fmt.Sprintf("the %s it should match", t.matchField()))
				p.CausedBy(f, p.Rule, t.doc, t.at) // the rule is IDL201 itself
			}
		}
	},
}

// stopFix says what would let an incomplete chain go on.
func stopFix(c *chain.Chain) string {
	s := c.Stop
	switch {
	case len(s.Lacking) == 1:
		return "add the operation there"
	case len(s.Lacking) > 1:
		return "add the operation to the one that should carry it"
	case s.Next != boundary.Adapter:
		return `correct "to", or add that document`
	case c.Last().Doc.Policy != nil:
		return fmt.Sprintf("set adapter.service to %q", s.At)
	}
	return `add an adapter document with that service, or embed the policy in this edge under "adapter"`
}
