package conform

// cf09 is CF09: a read-only operation without a key.
var cf09 = &Probe{
	ID: "CF09", Checks: "read-only passthrough", Name: "a read-only operation without a key",
	Passes: "any answer other than on_missing.status",
	Why: `Reads carry no key: a middleware that demands one on every route rather
than on the operations require_key lists breaks every client and cache
that reads.`,
	Sends: `One request to a read-only operation outside require_key, without a key
and without a body.`,
	Skipped: `When the policy declares no read-only operation outside require_key, or
on_missing declares no status to tell a refusal by.`,

	requests: 1, effects: -1, skip: skipReadOnly, run: runReadOnly,
}

func skipReadOnly(r *Runner) string {
	switch {
	case r.readOnly == nil:
		return "the policy declares no read-only operation outside require_key"
	case r.policy.onMissing.status == 0:
		return "http_idempotency.on_missing declares no status"
	}
	return ""
}

func runReadOnly(t *trial) {
	status := t.policy.onMissing.status
	t.expect("an answer other than %d (on_missing): %s needs no key", status, t.readOnly.Key)
	resp := t.send(t.newRequest(t.readOnly, "", nil))
	if resp.err != nil || resp.status == status {
		t.fail("%s", resp.summary())
	}
}
