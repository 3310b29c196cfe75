package conform

import "fmt"

// cf06 is CF06: same key and payload re-serialised (key order, spaces, 1.0).
var cf06 = &Probe{
	ID: "CF06", Checks: "canonicalization", Name: "same key and payload re-serialised (key order, spaces, 1.0)",
	Passes: "a replay of the first answer, as CF03 judges one",
	Why: `Clients, proxies and SDK versions spell one JSON value differently, and
order a form's fields differently. With canonical_json (canonical_form),
a retry re-serialised on the way is still the same payload; a target
that fingerprints the bytes refuses a harmless retry as a conflict, or
executes it again.`,
	Sends: `A request with a fresh key, then the same key with the same JSON value
re-serialised: members in another order, other whitespace, and an
integer written as 1.0 (the member idemlint_probe_n, 1, is added when
the body has no integer of its own). An operation whose example sends a
form (Content-Type application/x-www-form-urlencoded) sends its pairs in
reverse order instead.`,
	Skipped: `When the canonicalization of the operation's media type is not
canonical_json (canonical_form for a form), when the fingerprint leaves
out the body or is not declared, or when the policy promises no replay
(as CF03).`,

	requests: 2, effects: 1, effectsWhy: "the first request only: the second is a replay",
	skip: skipReserialised, run: runReserialised,
}

func skipReserialised(r *Runner) string {
	if fp := r.policy.fingerprint; fp != nil {
		contentType := r.target.header.Get("Content-Type")
		want := "canonical_json"
		if r.target.form {
			want = "canonical_form"
		}
		switch c := fp.canonicalizationOf(contentType); {
		case c == want:
		case fp.byMediaType != nil:
			return fmt.Sprintf("idempotency_fingerprint.canonicalization is %q for %s: a re-serialised body is another payload", c, mediaType(contentType))
		default:
			return fmt.Sprintf("idempotency_fingerprint.canonicalization is %q: a re-serialised body is another payload", c)
		}
	}
	if s := skipNoBodyFingerprint(r); s != "" {
		return s
	}
	return skipNoReplay(r)
}

func runReserialised(t *trial) {
	var fields []field
	if !t.target.form && !hasSafeInteger(t.target.base) { // a form has no 1.0
		fields = append(fields, field{NumberField, number("1")})
	}
	body := payload(t.target, newUUID(), fields...)
	r := t.newRequest(t.target, newUUID(), body)
	first := t.establish(r)
	if first == nil {
		return
	}
	again := t.again(r)
	again.body = t.target.reserialise(body)
	t.checkReplay(first, t.send(again), "the first answer", "the answer to the re-serialised payload")
}
