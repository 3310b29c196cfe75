package conform

import "github.com/idemlint/idemlint/reference"

// cf11 is CF11: same key, 9007199254740993 and then 9007199254740992.
var cf11 = &Probe{
	ID: "CF11", Checks: "exact big integers", Name: "same key, 9007199254740993 and then 9007199254740992",
	Passes: "the second answer is no replay of the first (or the first is refused: 400 " + reference.CodeNotCanonicalizable + ")",
	Why: `9007199254740993 and 9007199254740992 round to one IEEE double. A
fingerprint computed after parsing numbers into float64 takes two
payloads that differ in an id or an amount for one, and replays an
answer to the other request.`,
	Sends: `A request with a fresh key and the member idemlint_probe_big:
9007199254740993, then the same key and payload with 9007199254740992,
written as those digits: no float64 is involved. A target may refuse the
first with 400 and error_code ` + reference.CodeNotCanonicalizable + `: it refuses
what it cannot fingerprint exactly.`,
	Skipped: `When the fingerprint is not declared or leaves out the body; and,
unjudgeable, when no earlier probe saw the target replay at all: against
a target that never replays, a fresh answer proves nothing.`,

	requests: 2, effects: -1, skip: skipNoBodyFingerprint, run: runBigInteger,
}

func runBigInteger(t *trial) {
	if !t.replaySeen {
		t.skip(unjudgeable)
		return
	}
	nonce := newUUID()
	r := t.newRequest(t.target, newUUID(), payload(t.target, nonce, field{BigField, number(bigExact)}))
	t.expect("%s after %s not answered with the first answer (or the first refused with 400 %s)", bigRounded, bigExact, reference.CodeNotCanonicalizable)
	first := t.send(r)
	if code, _ := errorCode(first.body); first.err == nil && first.status == 400 && code == reference.CodeNotCanonicalizable {
		return // the target refuses what it cannot fingerprint exactly: allowed
	}
	if !first.ok() {
		t.fail("to the first: %s", first.summary())
		return
	}
	rounded := t.again(r)
	rounded.body = t.target.encode(payload(t.target, nonce, field{BigField, number(bigRounded)}))
	switch resp := t.send(rounded); {
	case resp.err != nil:
		t.fail("%s", resp.summary())
	case t.repeats(first, resp):
		t.fail("a replay of the answer to %s: %s", bigExact, resp.summary())
	}
}
