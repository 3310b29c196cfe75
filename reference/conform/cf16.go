package conform

import "strings"

// cf16 is CF16: replay marker on CF03's replay, not on CF02's answer.
var cf16 = &Probe{
	ID: "CF16", Checks: "replayed_header", Name: "replay marker on CF03's replay, not on CF02's answer",
	Passes: "the replayed header says true on CF03's replay, and is absent (or false) on CF02's answer",
	Why: `A client that must tell a replay from a fresh execution, to book a
payment once or to log a retry, reads the marker; a marker on a fresh
answer is as wrong as none on a replay.`,
	Sends: `Nothing of its own: it reads CF02's answer and CF03's replay.`,
	Skipped: `When idempotency_replay declares no replayed_header, or the policy
promises no replay (as CF03).`,

	effects: -1, skip: skipMarker, run: runMarker,
}

func skipMarker(r *Runner) string {
	if r.policy.replayedHeader() == "" {
		return "idempotency_replay declares no replayed_header"
	}
	return skipNoReplay(r)
}

func runMarker(t *trial) {
	h := t.policy.replayedHeader()
	t.expect("%s: true on CF03's replay, and not on CF02's answer", h)
	if t.firstResp == nil || t.replayResp == nil || !t.firstResp.ok() || t.replayResp.err != nil {
		t.fail("CF02 got %s; CF03 got %s", t.firstOutcome(), t.replayOutcome())
		return
	}
	var wrong []string
	if v := t.firstResp.header.Values(h); len(v) > 0 && !strings.EqualFold(v[0], "false") {
		wrong = append(wrong, "CF02's answer: "+showHeader(h, v))
	}
	if v := t.replayResp.header.Values(h); len(v) != 1 || !strings.EqualFold(v[0], "true") {
		wrong = append(wrong, "CF03's replay: "+showHeader(h, v))
	}
	if len(wrong) > 0 {
		t.fail("%s", strings.Join(wrong, "; "))
	}
}

func (t *trial) replayOutcome() string {
	if t.replayResp == nil {
		return "nothing: it did not run"
	}
	return t.replayResp.summary()
}
