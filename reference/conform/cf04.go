package conform

import "strings"

// cf04 is CF04: key echo on CF02's answer and CF03's replay.
var cf04 = &Probe{
	ID: "CF04", Checks: "echo_key_header", Name: "key echo on CF02's answer and CF03's replay",
	Passes: "CF02's answer, and CF03's replay when it ran, each carry one key header with the key sent",
	Why: `A client, proxy or log that correlates answers by the echoed key must see
the key it sent: an echo of another key, or two, points the trace at the
wrong request.`,
	Sends:   `Nothing of its own: it reads CF02's answer and CF03's replay.`,
	Skipped: `When http_idempotency.echo_key_header is not true.`,

	effects: -1, skip: skipEcho, run: runEcho,
}

func skipEcho(r *Runner) string {
	if !r.policy.echoKey {
		return "http_idempotency.echo_key_header is not true"
	}
	return ""
}

func runEcho(t *trial) {
	if t.firstResp == nil {
		t.failWith("CF02's answer to check", "CF02 got %s", t.firstOutcome())
		return
	}
	h := t.keyHeader()
	key := t.first.key
	answers := []struct {
		name string
		resp *response
	}{{"CF02's answer", t.firstResp}}
	t.expect("%s: %s on CF02's answer", h, key)
	if t.replayResp != nil {
		answers = append(answers, struct {
			name string
			resp *response
		}{"CF03's replay", t.replayResp})
		t.expect("%s: %s on CF02's answer and on CF03's replay", h, key)
	}
	var wrong []string
	for _, a := range answers {
		switch {
		case a.resp.err != nil:
			wrong = append(wrong, a.name+": "+a.resp.summary())
		default:
			if got := a.resp.header.Values(h); len(got) != 1 || got[0] != key {
				wrong = append(wrong, a.name+": "+showHeader(h, got))
			}
		}
	}
	if len(wrong) > 0 {
		t.fail("%s", strings.Join(wrong, "; "))
	}
}
