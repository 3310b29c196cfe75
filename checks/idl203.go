package checks

import (
	"fmt"
	"strings"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL203 checks that every hop of a chain names the same key header.
var idl203 = &Rule{
	ID:       "IDL203",
	Name:     "one-key-header",
	Severity: Error,
	Summary:  "one key header name along each chain",
	Doc: `Each document's http_idempotency.header says which header carries the key
(default "x-idempotency-key"). Along one chain it must be one name, compared
case-insensitively as HTTP does: a BFF that validates "x-idempotency-key"
while the adapter reads "Idempotency-Key" sees a key the adapter never gets,
and the adapter deduplicates nothing. The chain's name is the one its
browser_to_bff edge uses.

Fix: set http_idempotency.header to the chain's key header at the hop the
message names (and let its allowlists carry it).`,
	Requires: []Input{ChainGraph},
	CheckSet: func(p *SetPass) {
		r := newChainReporter(p)
		for _, c := range ChainGraph.Of(p).Chains {
			if !c.StateChanging() {
				continue
			}
			for _, h := range c.Hops {
				idem := &h.Doc.Idempotency
				if !idem.OK() || strings.EqualFold(idem.KeyHeader(), c.KeyHeader()) {
					continue
				}
				switch hd := idem.Header; hd.State {
				case boundary.Absent:
					r.missing(c, h.Doc, idem.Pos, "header", fmt.Sprintf("set header to %q as %s does: this hop uses the default %q", c.KeyHeader(), c.KeyHop(), idem.KeyHeader()))
				case boundary.Valid:
					r.at(c, h.Doc, hd.Pos, fmt.Sprintf("key header %q differs from %q used at %s; use one name along the chain", hd.Value, c.KeyHeader(), c.KeyHop()))
				}
			}
		}
	},
}
