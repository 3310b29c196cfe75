package conform

// cf05 is CF05: same key, different payload.
var cf05 = &Probe{
	ID: "CF05", Checks: "idempotency_conflict", Name: "same key, different payload",
	Passes: "status on_payload_mismatch.status, with error_code (the declared one) when the body is JSON",
	Why: `The same key with another payload is a reused key or a changed retry.
Replaying the first answer hides the change from the client, and
executing the second payload makes the key meaningless; the conflict
status tells the client its key is reused.`,
	Sends: `A request with a fresh key and payload, then the same key with another
payload. On failure it says whether the 2xx that came was a replay of the
first answer (same body) or a re-execution.`,
	Skipped: `When on_payload_mismatch declares no status, the policy declares no
idempotency_fingerprint, or its inputs leave out the body (every body is
then the same payload).`,

	requests: 2, effects: 1, effectsWhy: "the first request only: a mismatch executes nothing",
	skip: skipNoMismatch, run: runMismatch,
}

func runMismatch(t *trial) {
	r := t.newRequest(t.target, newUUID(), payload(t.target, newUUID()))
	first := t.establish(r)
	if first == nil {
		return
	}
	other := t.again(r)
	other.body = t.target.encode(payload(t.target, newUUID()))
	resp := t.send(other)
	t.noteRefusal(resp)
	t.checkRefusal(resp, t.policy.mismatch, "on_payload_mismatch", codeIfJSON, first)
}
