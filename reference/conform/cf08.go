package conform

// cf08 is CF08: same key on a second operation.
var cf08 = &Probe{
	ID: "CF08", Checks: "scope operation_key", Name: "same key on a second operation",
	Passes: "a 2xx fresh execution of the second operation, never the first operation's stored answer",
	Why: `Clients often draw keys from one generator for every endpoint. When
records are not scoped by operation, a key used to create an order and
then to refund it gets the order's stored answer, or a conflict, instead
of a refund.`,
	Sends: `A request with a fresh key to the probed operation, then the same key to
a second state-changing operation, with that operation's payload.`,
	Skipped: `When the policy declares no idempotency_scope, its scope does not list
operation_key (operations then share records, which IDL107 reports), or
it declares no second state-changing operation.`,

	requests: 2, effects: 2, effectsWhy: "one execution per operation",
	skip: skipOtherOperation, run: runOtherOperation,
}

func skipOtherOperation(r *Runner) string {
	if s := skipScope("operation_key")(r); s != "" {
		return s
	}
	if r.second == nil {
		return "the policy declares no second state-changing operation"
	}
	return ""
}

func runOtherOperation(t *trial) {
	r := t.newRequest(t.target, newUUID(), payload(t.target, newUUID()))
	first := t.establish(r)
	if first == nil {
		return
	}
	t.expect("2xx: a fresh execution of %s, whatever the key did on %s", t.second.Key, t.target.Key)
	other := t.again(r)
	other.op, other.path, other.body = t.second, t.fillPath(t.second.Path), t.second.encode(payload(t.second, newUUID()))
	resp := t.send(other)
	switch {
	case !resp.ok():
		t.fail("%s", resp.summary())
	case t.repeats(first, resp):
		t.fail("%s's answer replayed: %s", t.target.Key, resp.summary())
	}
}
