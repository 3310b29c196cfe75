package checks

import (
	"fmt"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/checks/jsontree"
)

// IDL204 checks that the adapter policy a chain reaches owns its key.
var IDL204 = register(&Rule{
	ID:       "IDL204",
	Name:     "one-owner",
	Severity: Error,
	Summary:  "exactly one owner per chain, and it is the adapter policy",
	Doc: `Idempotency is completed in exactly one place: the component with the side
effect, the adapter. Its policy declares http_idempotency.role "owner"; a
policy embedded in a gateway_to_adapter edge is the owner by its place, and
the edge's role stays validate_only or passthrough. A chain whose adapter
does not own the key has no owner at all: duplicates execute twice.

Split with IDL105: a BFF or gateway that claims role "owner" is visible in
its own document, and IDL105 reports it there, once. IDL204 reports what the
chain adds: the adapter policy a state-changing chain reaches is not the
owner.

Fix: set the adapter's http_idempotency.role to "owner".`,
	CheckSet: func(p *SetPass) {
		r := newChainReporter(p)
		const why = "this chain has no owner, and only its adapter policy may own the key"
		for _, c := range p.Graph.Chains {
			if !c.StateChanging || !c.Complete() || c.Last().Owner() {
				continue
			}
			h := c.Last()
			idem := h.Doc.Idempotency
			switch {
			case idem == nil:
				if !chain.StateChanging(h.Doc) && !h.Doc.Has("http_idempotency") { // else the schema reports it
					r.at(c, h.Doc, idempotencyPointer, `add http_idempotency with role "owner": `+why)
				}
			default:
				switch kind, ok := idem.Field("role"); {
				case !ok:
					r.at(c, h.Doc, idempotencyField("role"), `set role to "owner": `+why)
				case kind == jsontree.String:
					r.at(c, h.Doc, idempotencyField("role"), fmt.Sprintf(`set role to "owner" instead of %q: %s`, idem.Role, why))
				}
			}
		}
	},
})
