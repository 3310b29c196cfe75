package conform

// cf10 is CF10: same key, a value sent as 100 and then as "100".
var cf10 = &Probe{
	ID: "CF10", Checks: "no type coercion", Name: `same key, a value sent as 100 and then as "100"`,
	Passes: "status on_payload_mismatch.status, judged on the status alone (error_code is CF05's concern)",
	Why: `100 and "100" are different payloads, which a handler may treat
differently. A fingerprint that coerces types takes the second for a
retry of the first and answers a request the client did not send with
the stored answer.`,
	Sends: `A request with a fresh key and the member idemlint_probe_amount: 100,
then the same key and payload with idemlint_probe_amount: "100".`,
	Skipped: `As CF05: when on_payload_mismatch declares no status, or the fingerprint
is not declared or leaves out the body; and for an operation that sends
a form.`,

	requests: 2, effects: 1, effectsWhy: "the first request only: a mismatch executes nothing",
	skip: skipTypeChange, run: runTypeChange,
}

func skipTypeChange(r *Runner) string {
	if r.target != nil && r.target.form {
		return "the operation sends a form, whose values carry no JSON type"
	}
	return skipNoMismatch(r)
}

// runTypeChange judges the status alone: whether the refusal carries the
// declared error_code is CF05's concern, and one defect fails one probe.
func runTypeChange(t *trial) {
	nonce := newUUID()
	r := t.newRequest(t.target, newUUID(), payload(t.target, nonce, field{AmountField, number("100")}))
	first := t.establish(r)
	if first == nil {
		return
	}
	typed := t.again(r)
	typed.body = t.target.encode(payload(t.target, nonce, field{AmountField, str("100")}))
	t.checkRefusal(t.send(typed), refusalSpec{status: t.policy.mismatch.status}, "on_payload_mismatch", codeIgnored, first)
}
