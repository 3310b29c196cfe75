package conform

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/idemlint/idemlint/reference"
)

// probe is one row of the table of spec section 5.
type probe struct {
	id     string
	name   string // what it sends
	checks string // the policy rule it checks
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

// probes are the probes in the order they run: CF03 and CF04 build on
// CF02, and the probes after CF02 fill path parameters with its id.
var probes = []probe{
	{
		id: "CF01", checks: "on_missing", name: "key-required request without the key",
		requests: 1, effects: 0, effectsWhy: "a refused request executes nothing",
		skip: skipMissingKey, run: runMissingKey,
	},
	{
		id: "CF02", checks: "fresh execution", name: "first request with a fresh key",
		requests: 1, effects: 1, effectsWhy: "one execution",
		skip: skipNoBody, run: runFresh,
	},
	{
		id: "CF03", checks: "idempotency_replay", name: "same key, same payload, after CF02 finished",
		requests: 1, effects: 0, effectsWhy: "a replay executes nothing",
		skip: skipNoBody, run: runReplay,
	},
	{
		id: "CF04", checks: "echo_key_header", name: "key echo on CF02's answer and CF03's replay",
		effects: -1, skip: skipEcho, run: runEcho,
	},
	{
		id: "CF05", checks: "idempotency_conflict", name: "same key, different payload",
		requests: 2, effects: 1, effectsWhy: "the first request only: a mismatch executes nothing",
		skip: skipNoBodyFingerprint, run: runMismatch,
	},
	{
		id: "CF06", checks: "idempotency_fingerprint canonicalization", name: "same key, same payload re-serialised (key order, whitespace, 1.0 for 1)",
		requests: 2, effects: 1, effectsWhy: "the first request only: the second is a replay",
		skip: skipReserialised, run: runReserialised,
	},
	{
		id: "CF07", checks: "at-most-once under concurrency / idempotency_inflight", name: "concurrent requests with one fresh key",
		burst: true, effects: 1, effectsWhy: "exactly one execution for the whole burst",
		skip: skipNoBody, run: runConcurrent,
	},
	{
		id: "CF08", checks: "idempotency_scope operation_key", name: "same key on a second operation",
		requests: 2, effects: 2, effectsWhy: "one execution per operation",
		skip: skipOtherOperation, run: runOtherOperation,
	},
	{
		id: "CF09", checks: "read-only passthrough", name: "a read-only operation without a key",
		requests: 1, effects: -1, skip: skipReadOnly, run: runReadOnly,
	},
	{
		id: "CF10", checks: "no type coercion", name: `same key, a value sent as 100 and then as "100"`,
		requests: 2, effects: 1, effectsWhy: "the first request only: a mismatch executes nothing",
		skip: skipNoBodyFingerprint, run: runTypeChange,
	},
	{
		id: "CF11", checks: "exact big integers", name: "same key, an integer sent as 9007199254740993 and then as 9007199254740992",
		requests: 2, effects: -1, skip: skipNoBodyFingerprint, run: runBigInteger,
	},
	{
		id: "CF12", checks: "Structured Field key", name: "the key sent quoted (Structured Field String) after the bare form",
		requests: 2, effects: 1, effectsWhy: "the first request only: the quoted key is the same key",
		skip: skipNoBody, run: runQuotedKey,
	},
	{
		id: "CF13", checks: "idempotency_scope tenant_id", name: "same key and payload, another tenant",
		requests: 2, effects: 2, effectsWhy: "one execution per tenant",
		skip: skipOtherTenant, run: runOtherTenant,
	},
}

// Skip reasons. Each names the policy field or the input that makes the
// probe inapplicable.

func skipNoBody(r *Runner) string {
	if r.target.base == nil {
		return noObjectBody(r.target)
	}
	return ""
}

func noObjectBody(op *operation) string {
	return fmt.Sprintf("the example body of %s is not a JSON object, so conform cannot add %s to it; give an object body instead", op.Key.Value, NonceField)
}

func skipMissingKey(r *Runner) string {
	switch {
	case !r.requiresKey(r.target.Operation):
		return fmt.Sprintf("%s does not require the key (http_idempotency.require_key)", r.target.Key.Value)
	case r.onMissingStatus() == 0:
		return "http_idempotency.on_missing declares no status"
	}
	return skipNoBody(r)
}

func (r *Runner) onMissingStatus() int {
	return int(r.policy.Idempotency.OnMissing.Status.Value)
}

func skipEcho(r *Runner) string {
	if !r.policy.Idempotency.EchoKeyHeader.Value {
		return "http_idempotency.echo_key_header is false"
	}
	return skipNoBody(r)
}

func skipNoBodyFingerprint(r *Runner) string {
	if !r.policy.Fingerprint.Inputs.Contains("body") {
		return "idempotency_fingerprint.inputs leaves out the body: every body is the same payload"
	}
	return skipNoBody(r)
}

func skipReserialised(r *Runner) string {
	if c := r.policy.Fingerprint.Canonicalization.Value; c != "canonical_json" {
		return fmt.Sprintf("idempotency_fingerprint.canonicalization is %s: a re-serialised body is another payload", c)
	}
	return skipNoBodyFingerprint(r)
}

func skipOtherOperation(r *Runner) string {
	switch {
	case !r.policy.Scope.Contains("operation_key"):
		return "idempotency_scope does not list operation_key: one key is one record across operations"
	case r.second == nil:
		return "the policy declares no second state-changing operation"
	case r.second.base == nil:
		return noObjectBody(r.second)
	}
	return skipNoBody(r)
}

func skipReadOnly(r *Runner) string {
	switch {
	case r.readOnly == nil:
		return "the policy declares no read-only operation outside require_key"
	case r.onMissingStatus() == 0:
		return "http_idempotency.on_missing declares no status"
	}
	return ""
}

func skipOtherTenant(r *Runner) string {
	if !r.policy.Scope.Contains("tenant_id") {
		return "idempotency_scope does not list tenant_id: tenants share records"
	}
	return skipNoBody(r)
}

// The probes.

func runMissingKey(t *trial) {
	om := t.policy.Idempotency.OnMissing
	resp := t.send(t.newRequest(t.target, "", payload(t.target, newUUID())))
	t.checkRefusal(resp, int(om.Status.Value), om.ErrorCode.Value, "on_missing", true)
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

func (r *response) ok() bool { return r.err == nil && is2xx(r.status) }

func runReplay(t *trial) {
	if t.firstResp == nil || !t.firstResp.ok() {
		t.failWith("a completed first attempt (CF02) to replay", "CF02 got %s", t.firstOutcome())
		return
	}
	again := *t.first
	t.replayResp = t.send(&again)
	t.checkReplay(t.firstResp, t.replayResp, "CF02's answer", "the replay")
}

// firstOutcome describes CF02's answer for the probes that needed it.
func (t *trial) firstOutcome() string {
	if t.firstResp == nil {
		return "nothing: it did not run"
	}
	return t.firstResp.summary()
}

func runEcho(t *trial) {
	if t.firstResp == nil {
		t.failWith("CF02's answer to check", "CF02 got %s", t.firstOutcome())
		return
	}
	h := t.keyHeader()
	key := t.first.key
	t.expect("%s: %s on CF02's answer and on CF03's replay", h, key)
	var wrong []string
	for _, a := range []struct {
		name string
		resp *response
	}{{"CF02's answer", t.firstResp}, {"CF03's replay", t.replayResp}} {
		switch {
		case a.resp == nil:
			wrong = append(wrong, a.name+": none")
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

func showHeader(name string, values []string) string {
	if len(values) == 0 {
		return "no " + name + " header"
	}
	return name + ": " + strings.Join(values, ", ")
}

func runMismatch(t *trial) {
	key := newUUID()
	if t.establish(t.newRequest(t.target, key, payload(t.target, newUUID()))) == nil {
		return
	}
	c := t.policy.Conflict.OnPayloadMismatch
	t.checkRefusal(t.send(t.newRequest(t.target, key, payload(t.target, newUUID()))), int(c.Status.Value), c.ErrorCode.Value, "on_payload_mismatch", false)
}

func runReserialised(t *trial) {
	var fields []field
	if !hasSafeInteger(t.target.base) {
		fields = append(fields, field{NumberField, number("1")})
	}
	body := payload(t.target, newUUID(), fields...)
	r := t.newRequest(t.target, newUUID(), body)
	first := t.establish(r)
	if first == nil {
		return
	}
	again := *r
	again.body = reserialise(body)
	t.checkReplay(first, t.send(&again), "the first answer", "the answer to the re-serialised payload")
}

func runConcurrent(t *trial) {
	in := t.policy.Inflight
	r := t.newRequest(t.target, newUUID(), payload(t.target, newUUID()))
	r.wait = true
	n := t.cfg.Concurrency
	replayed := ""
	if h := t.replayedHeader(); h != "" {
		replayed = fmt.Sprintf(", exactly one without %s: true", h)
	}
	duplicates := "duplicates wait for it and replay it"
	switch {
	case in.Policy.Value != "wait":
		duplicates = fmt.Sprintf("duplicates in flight get %d at once, later ones a replay", in.Status.Value)
	case in.Status.Value != 0:
		duplicates += fmt.Sprintf(" (or get %d after %d ms)", in.Status.Value, in.WaitTimeoutMS.Value)
	}
	t.expect("one execution: every 2xx answer with one body%s; %s", replayed, duplicates)

	resps := make([]*response, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range resps {
		wg.Go(func() {
			dup := *r
			<-start // all at once, to hit the attempt while it runs
			resps[i] = t.send(&dup)
		})
	}
	close(start)
	wg.Wait()

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
	for _, other := range results[1:] {
		if !bytes.Equal(other.body, results[0].body) {
			t.fail("%s, with %d different bodies among the 2xx: more than one execution", tally(resps), distinctBodies(results))
			t.res.Diff = bodyDiff(results[0].body, other.body, "one answer", "another answer")
			return
		}
	}
	if h := t.replayedHeader(); h != "" {
		executed := 0
		for _, resp := range results {
			if resp.header.Get(h) != "true" {
				executed++
			}
		}
		if executed != 1 {
			t.fail("%s, %d of them without %s: true", tally(resps), executed, h)
		}
	}
}

// inflightAnswer reports whether resp is the inflight policy's answer to
// a duplicate: its status, and when that status is a 2xx (202), a body
// with an error_code, which the operation's own 2xx result does not have.
func (t *trial) inflightAnswer(resp *response) bool {
	status := int(t.policy.Inflight.Status.Value)
	if status == 0 || resp.status != status {
		return false
	}
	_, coded := errorCode(resp.body)
	return !is2xx(status) || coded
}

func distinctBodies(resps []*response) int {
	seen := map[string]bool{}
	for _, r := range resps {
		seen[string(r.body)] = true
	}
	return len(seen)
}

func runOtherOperation(t *trial) {
	key := newUUID()
	first := t.establish(t.newRequest(t.target, key, payload(t.target, newUUID())))
	if first == nil {
		return
	}
	t.expect("2xx: a fresh execution of %s, whatever the key did on %s", t.second.Key.Value, t.target.Key.Value)
	resp := t.send(t.newRequest(t.second, key, payload(t.second, newUUID())))
	switch {
	case !resp.ok():
		t.fail("%s", resp.summary())
	case t.repeats(first, resp):
		t.fail("%s's answer replayed: %s", t.target.Key.Value, resp.summary())
	}
}

func runReadOnly(t *trial) {
	status := t.onMissingStatus()
	t.expect("an answer other than %d (on_missing): %s needs no key", status, t.readOnly.Key.Value)
	resp := t.send(t.newRequest(t.readOnly, "", nil))
	if resp.err != nil || resp.status == status {
		t.fail("%s", resp.summary())
	}
}

func runTypeChange(t *trial) {
	key, nonce := newUUID(), newUUID()
	if t.establish(t.newRequest(t.target, key, payload(t.target, nonce, field{AmountField, number("100")}))) == nil {
		return
	}
	c := t.policy.Conflict.OnPayloadMismatch
	resp := t.send(t.newRequest(t.target, key, payload(t.target, nonce, field{AmountField, str("100")})))
	t.checkRefusal(resp, int(c.Status.Value), c.ErrorCode.Value, "on_payload_mismatch", false)
}

func runBigInteger(t *trial) {
	key, nonce := newUUID(), newUUID()
	big := func(lit string) *request {
		return t.newRequest(t.target, key, payload(t.target, nonce, field{BigField, number(lit)}))
	}
	t.expect("%s after %s not answered with the first answer (or the first refused with 400 %s)", bigRounded, bigExact, reference.CodeNotCanonicalizable)
	first := t.send(big(bigExact))
	if code, _ := errorCode(first.body); first.err == nil && first.status == 400 && code == reference.CodeNotCanonicalizable {
		return // the target refuses what it cannot fingerprint exactly: allowed
	}
	if !first.ok() {
		t.fail("to the first: %s", first.summary())
		return
	}
	resp := t.send(big(bigRounded))
	switch {
	case resp.err != nil:
		t.fail("%s", resp.summary())
	case t.repeats(first, resp):
		t.fail("a replay of the answer to %s: %s", bigExact, resp.summary())
	}
}

func runQuotedKey(t *trial) {
	key := newUUID()
	r := t.newRequest(t.target, key, payload(t.target, newUUID()))
	first := t.establish(r)
	if first == nil {
		return
	}
	quoted := *r
	quoted.key = strconv.Quote(key) // a UUID needs no escape: "<uuid>"
	t.checkReplay(first, t.send(&quoted), "the answer to the bare key", "the answer to the quoted key")
}

func runOtherTenant(t *trial) {
	r := t.newRequest(t.target, newUUID(), payload(t.target, newUUID()))
	first := t.establish(r)
	if first == nil {
		return
	}
	t.expect("2xx: a fresh execution for tenant %s, never tenant %s's stored answer", TenantB, TenantA)
	other := *r
	other.tenant = TenantB
	switch resp := t.send(&other); {
	case !resp.ok():
		t.fail("%s", resp.summary())
	case t.repeats(first, resp):
		t.fail("tenant %s's answer replayed: %s", TenantA, resp.summary())
	}
}

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

// checkRefusal demands status with error_code code (any error_code when
// code is ""). A JSON body must carry it; any body must when needCode.
func (t *trial) checkRefusal(resp *response, status int, code, section string, needCode bool) {
	want := "an error_code"
	if code != "" {
		want = fmt.Sprintf("error_code %q", code)
	}
	t.expect("%d with %s (%s)", status, want, section)
	got, coded := errorCode(resp.body)
	_, isJSON := decodeJSON(resp.body)
	switch {
	case resp.err != nil || resp.status != status:
		t.fail("%s", resp.summary())
	case !coded && (needCode || isJSON):
		t.fail("%s, without error_code", resp.summary())
	case coded && code != "" && got != code:
		t.fail("%s", resp.summary())
	}
}

func (r *Runner) replayedHeader() string { return r.policy.Replay.ReplayedHeader.Value }

// checkReplay demands that dup replays first: the same status, the same
// body byte for byte, and the replayed header when the policy declares
// one.
func (t *trial) checkReplay(first, dup *response, firstName, dupName string) {
	h := t.replayedHeader()
	withHeader := ""
	if h != "" {
		withHeader = ", " + h + ": true"
	}
	t.expect("%d and the body of %s byte for byte%s", first.status, firstName, withHeader)
	if dup.err != nil {
		t.fail("%s", dup.summary())
		return
	}
	var wrong []string
	if dup.status != first.status {
		wrong = append(wrong, "status "+strconv.Itoa(dup.status))
	}
	if !bytes.Equal(dup.body, first.body) {
		wrong = append(wrong, "another body")
		t.res.Diff = bodyDiff(first.body, dup.body, firstName, dupName)
	}
	if h != "" && dup.header.Get(h) != "true" {
		wrong = append(wrong, showHeader(h, dup.header.Values(h)))
	}
	if len(wrong) > 0 {
		t.fail("%s: %s", strings.Join(wrong, ", "), dup.summary())
	}
}

// repeats reports evidence that b replays a: the replayed header, or the
// same status and the same non-empty body. Conform assumes that two
// executions never answer one body: a real result carries something
// fresh, such as a new id.
func (r *Runner) repeats(a, b *response) bool {
	if h := r.replayedHeader(); h != "" && b.header.Get(h) == "true" {
		return true
	}
	return b.status == a.status && len(a.body) > 0 && bytes.Equal(a.body, b.body)
}
