package conform

import "fmt"

// cf13 is CF13: same key and payload, another tenant.
var cf13 = &Probe{
	ID: "CF13", Checks: "scope tenant_id", Name: "same key and payload, another tenant",
	Passes: "a 2xx fresh execution for the second tenant, never the first tenant's stored answer",
	Why: `Clients choose keys, so two tenants can send one key, by chance or on
purpose. Records not scoped by tenant hand one tenant the other's stored
response: a data leak.`,
	Sends: `A request with a fresh key from tenant idemlint-probe-tenant-a (the tenant
header of scope_sources), then the same key and payload from
idemlint-probe-tenant-b. It probes the target alone, sending the header
itself, and its note says so: whether the hops in front forward the
header is for idemlint check to judge (IDL214).`,
	Skipped: `When the policy declares no idempotency_scope or its scope does not list
tenant_id (tenants then share records); and, unjudgeable, when no earlier
probe saw the target replay at all.`,

	requests: 2, effects: 2, effectsWhy: "one execution per tenant",
	skip: skipScope("tenant_id"), run: runOtherScope("tenant"),
}

// runOtherScope sends a completed request again from another tenant or
// actor, which must execute afresh.
func runOtherScope(who string) func(t *trial) {
	return func(t *trial) {
		if !t.replaySeen {
			t.skip(unjudgeable)
			return
		}
		r := t.newRequest(t.target, newUUID(), payload(t.target, newUUID()))
		first := t.establish(r)
		if first == nil {
			return
		}
		other := t.again(r)
		from, to, header := TenantA, TenantB, t.policy.tenantHeader
		if who == "actor" {
			from, to, header = ActorA, ActorB, t.policy.actorHeader
			other.actor = to
		} else {
			other.tenant = to
		}
		t.res.Note = fmt.Sprintf("this probes the target alone, with %s set: it says nothing about the hops in front of it, which must forward %s unchanged (idemlint check judges the chain: IDL214)", header, header)
		t.expect("2xx: a fresh execution for %s %s, never %s %s's stored answer", who, to, who, from)
		switch resp := t.send(other); {
		case !resp.ok():
			t.fail("%s", resp.summary())
		case t.repeats(first, resp):
			t.fail("%s %s's answer replayed: %s", who, from, resp.summary())
		}
	}
}
