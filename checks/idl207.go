package checks

import (
	"fmt"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL207 checks that every document of a chain agrees on echoing the key.
var idl207 = &Rule{
	ID:       "IDL207",
	Name:     "consistent-key-echo",
	Severity: Error,
	Summary:  "echo_key_header is the same at every document of a chain",
	Doc: `http_idempotency.echo_key_header says whether responses carry the key
header back (absent means false). Whether a client sees its key echoed must
not depend on which hop happened to answer (a BFF that rejects a keyless
request, a gateway that times out, or the adapter replaying a stored
response), so every document of a chain declares the same value. The chain's
value is its browser_to_bff edge's, the contract the browser sees.

Fix: set echo_key_header at the document the message names to the chain's
value.`,
	Requires: []Input{ChainGraph},
	CheckSet: func(p *SetPass) {
		r := newChainReporter(p)
		for _, c := range ChainGraph.Of(p).Chains {
			ref := c.KeyHop()
			if !c.StateChanging() || !ref.Doc.Idempotency.OK() {
				continue
			}
			want := ref.Doc.Idempotency.EchoKeyHeader.Value
			for _, h := range c.Hops {
				idem := &h.Doc.Idempotency
				if !idem.OK() || idem.EchoKeyHeader.Value == want {
					continue
				}
				msg := fmt.Sprintf("set echo_key_header to %t as %s does: responses must echo the key alike at every hop", want, ref)
				switch e := idem.EchoKeyHeader; e.State { // Invalid: the schema reports it
				case boundary.Absent:
					r.missing(c, h.Doc, idem.Pos, "echo_key_header", msg)
				case boundary.Valid:
					r.at(c, h.Doc, e.Pos, msg)
				}
			}
		}
	},
}
