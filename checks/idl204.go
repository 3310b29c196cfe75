package checks

import (
	"fmt"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL204 checks that the adapter policy a chain reaches owns its key.
var idl204 = &Rule{
	ID:       "IDL204",
	Name:     "one-owner",
	Severity: Error,
	Summary:  "exactly one owner per chain, and it is the adapter policy",
	Doc: `Idempotency is completed in exactly one place: the component with the side
effect, the adapter. Its policy declares http_idempotency.role "owner"; a
policy embedded in a gateway_to_adapter edge is the owner by its place, and
the edge's role stays validate_only or passthrough. A chain whose adapter
does not own the key has no owner at all: duplicates execute twice.

Reported: the adapter policy a state-changing chain reaches is not the
owner, and every hop upstream of it that claims role "owner" (a second
owner). IDL105 reports such an upstream role in its own document too; the
two findings are linked (a related location), and turning either rule off
leaves the other's finding in place.

Fix: set the adapter's http_idempotency.role to "owner".`,
	Requires: []Input{ChainGraph},
	CheckSet: func(p *SetPass) {
		r := newChainReporter(p)
		const why = "this chain has no owner, and only its adapter policy may own the key"
		for _, c := range ChainGraph.Of(p).Chains {
			if !c.StateChanging() || !c.Complete() {
				continue
			}
			// An upstream hop that claims the key makes a second owner,
			// whatever the adapter says; IDL105 reports the same role.
			for _, h := range c.Hops[:len(c.Hops)-1] {
				if role := h.Doc.Idempotency.Role; role.Value == "owner" {
					f := r.at(c, h.Doc, role.Pos, fmt.Sprintf(`set role to "validate_only" or "passthrough": %s claims the key, but only the chain's adapter policy may own it`, h))
					p.Overlap(f, idl105)
				}
			}
			h := c.Last()
			if h.Owner() {
				continue
			}
			idem := &h.Doc.Idempotency
			switch {
			case idem.State == boundary.Absent:
				if !h.Doc.StateChanging() { // else the schema requires it
					r.missing(c, h.Doc, h.Doc.Root.Pos, "http_idempotency", `add http_idempotency with role "owner": `+why)
				}
			case idem.Role.State == boundary.Absent:
				r.missing(c, h.Doc, idem.Pos, "role", `set role to "owner": `+why)
			case idem.Role.OK():
				r.at(c, h.Doc, idem.Role.Pos, fmt.Sprintf(`set role to "owner" instead of %q: %s`, idem.Role.Value, why))
			}
		}
	},
}
