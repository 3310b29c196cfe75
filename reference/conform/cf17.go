package conform

// cf17 is CF17: same key and payload, another actor.
var cf17 = &Probe{
	ID: "CF17", Checks: "scope actor_id", Name: "same key and payload, another actor",
	Passes: "a 2xx fresh execution for the second actor, never the first actor's stored answer",
	Why: `Within one tenant, two users can send one key. Records not scoped by actor
replay one user's response, with their order or their data, to another.`,
	Sends: `As CF13, from actor idemlint-probe-actor-a and then
idemlint-probe-actor-b (the actor header of scope_sources). It probes
the target alone, and its note says so.`,
	Skipped: `When the policy declares no idempotency_scope or its scope does not list
actor_id (actors then share records); and, unjudgeable, when no earlier
probe saw the target replay at all.`,

	requests: 2, effects: 2, effectsWhy: "one execution per actor",
	skip: skipScope("actor_id"), run: runOtherScope("actor"),
}
