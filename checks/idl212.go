package checks

import "fmt"

// IDL212 checks that an operation keeps its method along its chain.
var idl212 = &Rule{
	ID:       "IDL212",
	Name:     "one-method-per-chain",
	Severity: Error,
	Summary:  "an operation has the same method at every hop of its chain",
	Doc: `Hops may rewrite an operation's path (a BFF's /api/orders is the gateway's
/orders), never its method. Every rule that decides whether a hop requires,
retries or forwards the key reads the method: when the browser edge says POST
and the gateway says PUT, the gateway's require_key and retry methods are
judged for a request it never sees, and a retried POST can slip through a
list that only names PUT. A different method is almost always a copy-paste
slip in one document.

Reported at the method of each hop that differs from the browser edge's.

Fix: write the method the request really has at every hop.`,
	Requires: []Input{ChainGraph},
	CheckSet: func(p *SetPass) {
		r := newChainReporter(p)
		for _, c := range ChainGraph.Of(p).Chains {
			want := c.Hops[0].Op.Method
			if !want.OK() {
				continue
			}
			for _, h := range c.Hops[1:] {
				m := h.Op.Method
				if h.Embedded() || !m.OK() || m.Value == want.Value {
					continue // an embedded policy shares its edge's operation
				}
				f := r.at(c, h.Doc, m.Pos, fmt.Sprintf("method %s differs from %s at %s: an operation keeps its method along the chain; use %s here", m.Value, want.Value, c.Hops[0], want.Value))
				relate(f, c.Hops[0].Doc, want.Pos, "the method the browser sends")
			}
		}
	},
}
