package conform

import "fmt"

// cf06 is CF06: same key and payload re-serialised (key order, spaces, 1.0).
var cf06 = &Probe{
	ID: "CF06", Checks: "canonicalization", Name: "same key and payload re-serialised (key order, spaces, 1.0)",
	Passes: "a replay of the first answer, as CF03 judges one",
	Why: `Clients, proxies and SDK versions spell one JSON value differently. With
canonical_json, a retry re-serialised on the way is still the same
payload; a target that fingerprints the bytes refuses a harmless retry as
a conflict, or executes it again.`,
	Sends: `A request with a fresh key, then the same key with the same JSON value
re-serialised: members in another order, other whitespace, and an
integer written as 1.0 (the member idemlint_probe_n, 1, is added when
the body has no integer of its own).`,
	Skipped: `When canonicalization is not canonical_json, when the fingerprint leaves
out the body or is not declared, or when the policy promises no replay
(as CF03).`,

	requests: 2, effects: 1, effectsWhy: "the first request only: the second is a replay",
	skip: skipReserialised, run: runReserialised,
}

func skipReserialised(r *Runner) string {
	if fp := r.policy.fingerprint; fp != nil && fp.canonicalization != "canonical_json" {
		return fmt.Sprintf("idempotency_fingerprint.canonicalization is %q: a re-serialised body is another payload", fp.canonicalization)
	}
	if s := skipNoBodyFingerprint(r); s != "" {
		return s
	}
	return skipNoReplay(r)
}

func runReserialised(t *trial) {
	var fields []field
	if !hasSafeInteger(t.target.base) {
		fields = append(fields, field{NumberField, number("1")})
	}
	body := payload(t.target, newUUID(), fields...)
	r := t.newRequest(t.target, newUUID(), body)
	first := t.establish(r)
	if first == nil {
		return
	}
	again := t.again(r)
	again.body = reserialise(body)
	t.checkReplay(first, t.send(again), "the first answer", "the answer to the re-serialised payload")
}
