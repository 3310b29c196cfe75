package conform

import "fmt"

// cf18 is CF18: a replay and a burst spread over every target.
var cf18 = &Probe{
	ID: "CF18", Checks: "one record across replicas", Name: "a replay and a burst spread over every target",
	Passes: "exactly one execution per key across the targets, judged on executions only",
	Why: `Replicas that keep their records apart each execute the retry that lands
on them: behind a load balancer, at-most-once then holds only while
retries happen to reach the same replica.`,
	Sends: `A request with a fresh key to one target and its duplicate to the next,
then --concurrency copies of another fresh request spread over every
target. It judges executions only: answers that break the
replay or inflight policy are CF03's and CF07's concern. Without an
effects counter (--effects-url), a 2xx with a body of its own is an
execution and any other answer is not, which its note counts.`,
	Skipped: `When there is one target (give --target once per replica), or the
policy promises no replay (as CF03).`,

	requests: 2, burst: true, effects: 2, effectsWhy: "one execution for the replayed key, one for the burst",
	skip: skipOneTarget, run: runReplicas,
}

func skipOneTarget(r *Runner) string {
	if len(r.bases) < 2 {
		return "one target: give --target once per replica to probe replicas"
	}
	return skipNoReplay(r)
}

// runReplicas demands one record across the targets: a key completed on
// one target is not executed again by the next, and a burst spread over
// all of them executes once. It judges executions only (docs/probes.md,
// How a probe judges): how
// the answers follow the replay and inflight policies is CF03's and
// CF07's concern. Without an effects counter, a 2xx with a body of its
// own is an execution and any other answer is not.
func runReplicas(t *trial) {
	r := t.newRequest(t.target, newUUID(), payload(t.target, newUUID()))
	first := t.establish(r)
	if first == nil {
		return
	}
	t.expect("one execution across %d targets: no 2xx answer with a body of its own to the key's duplicate on another target, or among the burst's answers", len(t.bases))
	dup := t.again(r)
	resp := t.send(dup)
	switch {
	case resp.err != nil:
		t.fail("the duplicate on target %d: %s", dup.target+1, resp.summary())
		return
	case resp.ok() && !t.repeats(first, resp):
		t.fail("the duplicate on target %d executed again (another body: a re-execution, not a replay): %s", dup.target+1, resp.summary())
		t.res.Diff = bodyDiff(first.body, resp.body, fmt.Sprintf("the answer of target %d", r.target+1), fmt.Sprintf("the duplicate on target %d", dup.target+1), t.redact)
		return
	}
	uncounted := 0
	if !resp.ok() {
		uncounted++
	}
	resps := t.sendBurst(t.newRequest(t.target, newUUID(), payload(t.target, newUUID())))
	var results []*response
	for _, resp := range resps {
		switch {
		case resp.err != nil:
			t.fail("%s; %s", tally(resps), resp.summary())
			return
		case resp.ok():
			results = append(results, resp)
		default:
			uncounted++
		}
	}
	if t.differentBodies(resps, results) {
		return
	}
	if uncounted > 0 && t.client.effects == nil {
		t.res.Note = fmt.Sprintf("%d non-2xx answer(s) not counted as executions: without an effects counter (--effects-url) conform cannot tell whether they ran", uncounted)
	}
}
