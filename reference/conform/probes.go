package conform

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Probe is one conform probe, documented like a lint rule (checks.Rule):
// a row of the probe table (docs/probes.md), with why it
// matters, what it sends, when it passes and when it is skipped.
// "idemlint probes" lists them and "idemlint explain CF07" explains one.
// Adding a probe is one file, cfNN.go, holding its Probe value and the
// functions only it uses, plus its line in the table probes.
type Probe struct {
	ID     string `json:"id"`     // "CF07"; never renamed: the docs and every output name it
	Name   string `json:"name"`   // what it sends, in a few words: every output's probe column
	Checks string `json:"checks"` // the policy rule or property it checks
	Passes string `json:"passes"` // when it passes, in one line: the probe table of docs/probes.md
	// Why says what goes wrong for clients when a target fails the probe.
	Why string `json:"why"`
	// Sends says what the probe sends, request by request.
	Sends string `json:"sends"`
	// Skipped says when the policy or the run makes the probe
	// inapplicable or unjudgeable; the skip reason names the field.
	Skipped string `json:"skipped"`

	// requests is how many requests it sends at most; a burst probe sends
	// Config.Concurrency more.
	requests int
	burst    bool
	// effects is how much the effects counter must grow over the probe,
	// -1 when the probe says nothing about it; effectsWhy says why.
	effects    int
	effectsWhy string
	// skip returns why the policy makes the probe inapplicable, or "".
	skip func(r *Runner) string
	run  func(t *trial)
}

// probes are the probes in the order they run: CF03, CF04 and CF16 build
// on CF02, CF14 on CF01 and CF05, and the probes after CF02 fill path
// parameters with its id. Each is defined in its own file, cfNN.go.
var probes = []*Probe{
	cf01, cf02, cf03, cf04, cf05, cf06, cf07, cf08, cf09,
	cf10, cf11, cf12, cf13, cf14, cf15, cf16, cf17, cf18, cf19,
}

// Skip reasons shared by several probes. Each names the policy field or
// the input that makes a probe inapplicable.

func applicable(*Runner) string { return "" }

func skipMissingKey(r *Runner) string {
	switch {
	case !r.target.RequiresKey:
		return fmt.Sprintf("%s does not require the key (http_idempotency.require_key)", r.target.Key)
	case r.policy.onMissing.status == 0:
		return "http_idempotency.on_missing declares no status"
	}
	return ""
}

func skipNoReplay(r *Runner) string {
	switch rp := r.policy.replay; {
	case rp == nil:
		return "the policy declares no idempotency_replay, so it promises no replay"
	case !rp.storedResponse:
		return "idempotency_replay.on_completed is not stored_response, so it promises no replay"
	}
	return ""
}

func skipNoBodyFingerprint(r *Runner) string {
	switch fp := r.policy.fingerprint; {
	case fp == nil:
		return "the policy declares no idempotency_fingerprint, so no two payloads are known to differ"
	case !fp.body:
		return "idempotency_fingerprint.inputs leaves out the body: every body is the same payload"
	}
	return ""
}

func skipNoMismatch(r *Runner) string {
	if r.policy.mismatch.status == 0 {
		return "idempotency_conflict.on_payload_mismatch declares no status"
	}
	return skipNoBodyFingerprint(r)
}

func skipScope(member string) func(r *Runner) string {
	return func(r *Runner) string {
		switch {
		case !r.policy.scopeDeclared:
			return "the policy declares no idempotency_scope"
		case !r.policy.scopes(member):
			return fmt.Sprintf("idempotency_scope does not list %s: %s share records", member, scopeSharers[member])
		}
		return ""
	}
}

// scopeSharers say who shares records when a scope member is left out.
var scopeSharers = map[string]string{"operation_key": "operations", "tenant_id": "tenants", "actor_id": "actors"}

func (r *response) ok() bool { return r.err == nil && is2xx(r.status) }

// firstOutcome describes CF02's answer for the probes that needed it.
func (t *trial) firstOutcome() string {
	if t.firstResp == nil {
		return "nothing: it did not run"
	}
	return t.firstResp.summary()
}

func showHeader(name string, values []string) string {
	if len(values) == 0 {
		return "no " + name + " header"
	}
	return name + ": " + strings.Join(values, ", ")
}

// sendBurst sends Config.Concurrency copies of r at once, spread over
// the targets, and returns their answers.
func (t *trial) sendBurst(r *request) []*response {
	r.wait = true
	resps := make([]*response, t.cfg.Concurrency)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range resps {
		dup := *r
		dup.target = (r.target + i) % len(t.bases)
		wg.Go(func() {
			<-start // all at once, to hit the attempt while it runs
			resps[i] = t.send(&dup)
		})
	}
	close(start)
	wg.Wait()
	return resps
}

// differentBodies fails the probe, and reports true, when the 2xx
// results of a burst's answers resps differ: more than one execution.
func (t *trial) differentBodies(resps, results []*response) bool {
	for _, other := range results {
		if !bytes.Equal(other.body, results[0].body) {
			t.fail("%s, with %d different bodies among the 2xx: more than one execution", tally(resps), distinctBodies(results))
			t.res.Diff = bodyDiff(results[0].body, other.body, "one answer", "another answer", t.redact)
			return true
		}
	}
	return false
}

func distinctBodies(resps []*response) int {
	seen := map[string]bool{}
	for _, r := range resps {
		seen[string(r.body)] = true
	}
	return len(seen)
}

// unjudgeable is why a probe that must see no replay cannot be judged: a
// target that never replays answers every duplicate afresh.
const unjudgeable = "no earlier probe saw the target replay an answer, so a fresh answer here proves nothing"

// Checks shared by the probes.

// establish sends a probe's first request, which must complete (2xx) for
// the rest of the probe to mean anything; nil when it did not.
func (t *trial) establish(r *request) *response {
	resp := t.send(r)
	if !resp.ok() {
		t.failWith("2xx to the probe's first request, with a fresh key", "%s", resp.summary())
		return nil
	}
	return resp
}

// How checkRefusal treats the refusal's error_code.
const (
	codeIgnored  = iota // the status alone is judged
	codeIfJSON          // a JSON body must carry it
	codeRequired        // the body must carry it
)

// checkRefusal demands the refusal spec (with any error_code when spec
// names none). first, when the refusal follows a completed request with
// the same key, tells a replay from a re-execution when the refusal is
// missing.
func (t *trial) checkRefusal(resp *response, spec refusalSpec, section string, codeRule int, first *response) {
	want := ""
	switch {
	case codeRule == codeIgnored:
	case spec.code != "":
		want = fmt.Sprintf(" with error_code %q", spec.code)
	default:
		want = " with an error_code"
	}
	t.expect("%d%s (%s)", spec.status, want, section)
	got, coded := errorCode(resp.body)
	_, isJSON := decodeJSON(resp.body)
	switch {
	case resp.err != nil || resp.status != spec.status:
		t.fail("%s%s", resp.summary(), t.executedHow(resp, first))
	case codeRule == codeIgnored:
	case !coded && (codeRule == codeRequired || isJSON):
		t.fail("%s, without error_code", resp.summary())
		t.hintCode(resp, spec.code)
	case coded && spec.code != "" && got != spec.code:
		t.fail("%s", resp.summary())
		t.hintCode(resp, spec.code)
	}
}

// executedHow says what a 2xx that should have been a refusal was.
func (t *trial) executedHow(resp, first *response) string {
	switch {
	case !resp.ok():
		return ""
	case first == nil:
		return ": executed"
	case resp.status == first.status && bytes.Equal(resp.body, first.body):
		return ": a replay of the first answer (same body), so the change went unnoticed"
	}
	return ": a re-execution (a new body)"
}

// hintCode points at where a body keeps the code the policy declares for
// error_code, when it has one elsewhere.
func (t *trial) hintCode(resp *response, want string) {
	if at := codeElsewhere(resp.body, want); at != "" {
		t.res.Hint = fmt.Sprintf("the body has the code under %s; the spec wants it in a top-level error_code member", at)
	}
}

// checkReplay demands that dup replays first as the policy declares: the
// same status and the same body byte for byte. The replay marker is
// CF16's concern.
func (t *trial) checkReplay(first, dup *response, firstName, dupName string) {
	rp := t.policy.replay
	sameStatus, sameBody := rp == nil || rp.sameStatus, rp == nil || rp.sameBody
	switch {
	case sameStatus && sameBody:
		t.expect("%d and the body of %s byte for byte", first.status, firstName)
	case sameStatus:
		t.expect("%d, as %s (same_body is false)", first.status, firstName)
	default:
		t.expect("a replay of %s (same_status and same_body are false: any 2xx)", firstName)
	}
	if dup.err != nil {
		t.fail("%s", dup.summary())
		return
	}
	// Evidence that the target replays at all, even if not as declared,
	// makes the probes that need one judgeable.
	t.replaySeen = t.replaySeen || t.repeats(first, dup) || dup.status == first.status && sameJSON(first.body, dup.body)
	var wrong []string
	if sameStatus && dup.status != first.status || !sameStatus && !is2xx(dup.status) {
		wrong = append(wrong, "status "+strconv.Itoa(dup.status))
	}
	if sameBody && !bytes.Equal(dup.body, first.body) {
		what := "another body"
		switch {
		case sameJSON(first.body, dup.body):
			what = "the same JSON value spelt otherwise"
		case is2xx(dup.status):
			what = "another body: a re-execution, not a replay"
		}
		wrong = append(wrong, what)
		t.res.Diff = bodyDiff(first.body, dup.body, firstName, dupName, t.redact)
	}
	if len(wrong) > 0 {
		t.fail("%s: %s", strings.Join(wrong, ", "), dup.summary())
		return
	}
	t.replaySeen = true
}

// sameJSON reports whether a and b hold one JSON value, however spelt.
func sameJSON(a, b []byte) bool {
	va, okA := decodeJSON(a)
	vb, okB := decodeJSON(b)
	var lines []string
	if okA && okB {
		jsonDiff(va, vb, "", &lines)
	}
	return okA && okB && len(lines) == 0
}

// repeats reports evidence that b replays a: the replayed header, or the
// same status and the same non-empty body. Conform assumes that two
// executions never answer one body: a real result carries something
// fresh, such as a new id.
func (r *Runner) repeats(a, b *response) bool {
	if h := r.policy.replayedHeader(); h != "" && strings.EqualFold(b.header.Get(h), "true") {
		return true
	}
	return b.status == a.status && len(a.body) > 0 && bytes.Equal(a.body, b.body)
}
