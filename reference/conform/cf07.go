package conform

import "fmt"

// cf07 is CF07: concurrent requests with one fresh key.
var cf07 = &Probe{
	ID: "CF07", Checks: "at-most-once, inflight", Name: "concurrent requests with one fresh key",
	Passes: "exactly one execution: every 2xx answer has one body, the others follow idempotency_inflight (wait: a replay, or its status after wait_timeout_ms; reject: its status; none declared: any 4xx or 5xx)",
	Why: `Retries race the attempt they repeat: a client times out and retries
while the first attempt still runs, or a client and a gateway retry at
once. A store that looks the key up and then inserts it, without making
both one atomic step, lets two attempts execute: at-most-once fails
exactly when it matters.`,
	Sends: `--concurrency copies of one request with a fresh key, released at
once and spread over the targets.`,
	Skipped: `Never.`,

	burst: true, effects: 1, effectsWhy: "exactly one execution for the whole burst",
	skip: applicable, run: runConcurrent,
}

func runConcurrent(t *trial) {
	r := t.newRequest(t.target, newUUID(), payload(t.target, newUUID()))
	t.expect("one execution: every 2xx answer with one body; %s", t.inflightRule())
	t.burst(r)
}

// inflightRule says what duplicates of an attempt in flight get.
func (t *trial) inflightRule() string {
	in := t.policy.inflight
	switch {
	case in == nil:
		return "duplicates get a replay or a refusal (no idempotency_inflight declared)"
	case in.policy == "wait" && in.status != 0:
		return fmt.Sprintf("duplicates wait for it and replay it (or get %d after %d ms)", in.status, in.waitTimeoutMS)
	case in.policy == "wait":
		return "duplicates wait for it and replay it"
	}
	return fmt.Sprintf("duplicates in flight get %d at once, later ones a replay", in.status)
}

// burst sends a burst of r and demands one execution: every 2xx answer
// with one body, the others the inflight policy's answer.
func (t *trial) burst(r *request) {
	resps := t.sendBurst(r)
	var results []*response // the operation's result, executed or replayed
	for _, resp := range resps {
		switch {
		case resp.err != nil:
			t.fail("%s; %s", tally(resps), resp.summary())
			return
		case t.inflightAnswer(resp):
		case is2xx(resp.status):
			results = append(results, resp)
		default:
			t.fail("%s; %s", tally(resps), resp.summary())
			return
		}
	}
	if len(results) == 0 {
		t.fail("%s: no answer carries the result", tally(resps))
		return
	}
	t.differentBodies(resps, results)
}

// inflightAnswer reports whether resp is the inflight policy's answer to
// a duplicate: its status, and when that status is a 2xx (202), a body
// with an error_code, which the operation's own 2xx result does not have.
// With no inflight policy declared, any 4xx or 5xx is taken as one.
func (t *trial) inflightAnswer(resp *response) bool {
	in := t.policy.inflight
	if in == nil {
		return resp.status >= 400
	}
	if in.status == 0 || resp.status != in.status {
		return false
	}
	_, coded := errorCode(resp.body)
	return !is2xx(in.status) || coded
}
