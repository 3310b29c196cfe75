package conform

// cf03 is CF03: same key, same payload, after CF02 finished.
var cf03 = &Probe{
	ID: "CF03", Checks: "idempotency_replay", Name: "same key, same payload, after CF02 finished",
	Passes: "CF02's status and body, byte for byte (a diff of the JSON values on failure); request-id headers may differ",
	Why: `This is what the key is for: a client that retries after losing the
answer must get the first answer back, not a second execution (a second
charge, a second order). A different body is a re-execution; the same
JSON spelt otherwise breaks clients that compare or sign bodies.`,
	Sends: `CF02's request again, same key and body (to the next target when there
are several). The replay marker is CF16's concern, so one defect fails
one probe.`,
	Skipped: `When the policy declares no idempotency_replay, or its on_completed is not
stored_response: then it promises no replay. It fails, rather than
skips, when CF02 got no 2xx.`,

	requests: 1, effects: 0, effectsWhy: "a replay executes nothing",
	skip: skipNoReplay, run: runReplay,
}

func runReplay(t *trial) {
	if t.firstResp == nil || !t.firstResp.ok() {
		t.failWith("a completed first attempt (CF02) to replay", "CF02 got %s", t.firstOutcome())
		return
	}
	t.replayResp = t.send(t.again(t.first))
	t.checkReplay(t.firstResp, t.replayResp, "CF02's answer", "the replay")
}
