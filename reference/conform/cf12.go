package conform

import "strconv"

// cf12 is CF12: the key sent quoted after the bare form.
var cf12 = &Probe{
	ID: "CF12", Checks: "Structured Field key", Name: "the key sent quoted after the bare form",
	Passes: "a replay of the first answer: the quoted key is the same key",
	Why: `The key header is an RFC 8941 Structured Field String, which clients and
proxies may send quoted. A target that takes abc and "abc" for two keys
executes such a retry again.`,
	Sends: `A request with a fresh key sent bare, then the same request with the key
quoted ("<uuid>").`,
	Skipped: `When the policy promises no replay (as CF03).`,

	requests: 2, effects: 1, effectsWhy: "the first request only: the quoted key is the same key",
	skip: skipNoReplay, run: runQuotedKey,
}

func runQuotedKey(t *trial) {
	key := newUUID()
	r := t.newRequest(t.target, key, payload(t.target, newUUID()))
	first := t.establish(r)
	if first == nil {
		return
	}
	quoted := t.again(r)
	quoted.key = strconv.Quote(key) // a UUID needs no escape: "<uuid>"
	t.checkReplay(first, t.send(quoted), "the answer to the bare key", "the answer to the quoted key")
}
