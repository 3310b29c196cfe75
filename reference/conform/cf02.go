package conform

// cf02 is CF02: first request with a fresh key.
var cf02 = &Probe{
	ID: "CF02", Checks: "fresh execution", Name: "first request with a fresh key",
	Passes: "2xx",
	Why: `A target that refuses a well-formed request with a fresh key is not
usable at all, and the probes after it build on its answer: CF03 replays
it, CF04 and CF16 read its headers, and its "id" member fills the path
parameters ({id}) of every later probe.`,
	Sends:   `One request with a fresh key and a fresh payload.`,
	Skipped: `Never.`,

	requests: 1, effects: 1, effectsWhy: "one execution",
	skip: applicable, run: runFresh,
}

func runFresh(t *trial) {
	t.expect("2xx: the operation executed")
	t.first = t.newRequest(t.target, newUUID(), payload(t.target, newUUID()))
	t.firstResp = t.send(t.first)
	if !t.firstResp.ok() {
		t.fail("%s", t.firstResp.summary())
		return
	}
	t.resourceID = resourceID(t.firstResp.body)
}
