package conform

// cf01 is CF01: key-required request without the key.
var cf01 = &Probe{
	ID: "CF01", Checks: "on_missing", Name: "key-required request without the key",
	Passes: "status on_missing.status, and the body carries error_code (the declared one, if any)",
	Why: `A key-required operation that runs without a key leaves the client no
safe retry: a lost answer followed by a retry executes twice. Refusing
keyless requests is what makes the key required in practice, and the
error_code tells the client what to fix.`,
	Sends:   `One request with a fresh payload and no key header.`,
	Skipped: `When the operation is not in http_idempotency.require_key, or on_missing declares no status.`,

	requests: 1, effects: 0, effectsWhy: "a refused request executes nothing",
	skip: skipMissingKey, run: runMissingKey,
}

func runMissingKey(t *trial) {
	resp := t.send(t.newRequest(t.target, "", payload(t.target, newUUID())))
	t.noteRefusal(resp)
	t.checkRefusal(resp, t.policy.onMissing, "on_missing", codeRequired, nil)
}
