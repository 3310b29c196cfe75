package checks

// IDL105 keeps idempotency ownership out of the edges.
var idl105 = &Rule{
	ID:       "IDL105",
	Name:     "owner-only-in-adapter",
	Severity: Error,
	Subject:  "role",
	Summary:  `role "owner" appears only in an adapter policy; BFF and gateway are validate_only or passthrough`,
	Doc: `The component that performs the side effect is the only one that can
complete idempotency: it alone knows whether the charge or the order really
happened. A BFF or gateway that owns idempotency (stores keys, answers
duplicates from its own cache) splits the side effect from its record: a
duplicate the edge answers from memory may hide a failure the adapter saw,
and a duplicate that reaches the adapter by another path executes again
because the adapter never learned the key. Upstream hops only validate the
key and pass it on.

Reported: http_idempotency.role "owner" on a browser_to_bff, bff_to_gateway or
gateway_to_adapter document. A gateway_to_adapter document that embeds the
adapter policy under "adapter" is no exception: the embedded policy is the
owner, and the edge's own http_idempotency still describes the gateway.

Fix: set the role to "validate_only" (check the key is present, then
forward it) or "passthrough" (forward it untouched), and keep "owner" in the
adapter policy.`,
	CheckDocument: func(p *DocumentPass) {
		role := p.Doc.Idempotency.Role
		if !p.Doc.Kind.IsEdge() || role.Value != "owner" {
			return
		}
		hint := "only the adapter policy owns idempotency"
		if p.Doc.Policy != nil {
			hint = `the embedded "adapter" policy is the owner, this section describes the gateway`
		}
		p.Report(role.Pos, `set http_idempotency.role to "validate_only" or "passthrough": %s`, hint)
	},
}
