package conform

import (
	"fmt"
	"strings"
)

// cf15 is CF15: malformed keys: empty, one over max_length, two fields.
var cf15 = &Probe{
	ID: "CF15", Checks: "key_format", Name: "malformed keys: empty, one over max_length, two fields",
	Passes: "each answered on_missing.status, nothing executed",
	Why: `A key the policy forbids must be refused like a missing one: an empty key
makes every such client share one record, an oversized one grows the
store, and two key header fields leave the key to whichever proxy joins
them.`,
	Sends: `Three requests with fresh payloads: one with an empty key, one with a key
one character over key_format.max_length, one with two key header
fields.`,
	Skipped: `As CF01: when the operation is not in require_key, or on_missing
declares no status.`,

	requests: 3, effects: 0, effectsWhy: "a refused request executes nothing",
	skip: skipMissingKey, run: runMalformedKeys,
}

// runMalformedKeys sends three unusable keys, each of which must be
// refused like a missing one.
func runMalformedKeys(t *trial) {
	om := t.policy.onMissing
	t.expect("%d (on_missing) to each, nothing executed", om.status)
	over := strings.Repeat(strings.ReplaceAll(newUUID(), "-", ""), t.policy.maxKeyLength/32+1)[:t.policy.maxKeyLength+1]
	var wrong []string
	for _, k := range []struct {
		name string
		keys []string
	}{
		{"an empty key", []string{""}},
		{fmt.Sprintf("a key of %d characters", len(over)), []string{over}},
		{"two key header fields", []string{newUUID(), newUUID()}},
	} {
		r := t.newRequest(t.target, "", payload(t.target, newUUID()))
		r.keys = k.keys
		if resp := t.send(r); resp.err != nil || resp.status != om.status {
			wrong = append(wrong, k.name+": "+resp.summary())
		}
	}
	if len(wrong) > 0 {
		t.fail("%s", strings.Join(wrong, "; "))
	}
}
