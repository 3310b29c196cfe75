package conform

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/idemlint/idemlint/reference"
)

// probe is one row of the tables of spec sections 5 and 6.6.
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

// probes are the probes in the order they run: CF03, CF04 and CF16 build
// on CF02, CF14 on CF01 and CF05, and the probes after CF02 fill path
// parameters with its id.
var probes = []probe{
	{
		id: "CF01", checks: "on_missing", name: "key-required request without the key",
		requests: 1, effects: 0, effectsWhy: "a refused request executes nothing",
		skip: skipMissingKey, run: runMissingKey,
	},
	{
		id: "CF02", checks: "fresh execution", name: "first request with a fresh key",
		requests: 1, effects: 1, effectsWhy: "one execution",
		skip: applicable, run: runFresh,
	},
	{
		id: "CF03", checks: "idempotency_replay", name: "same key, same payload, after CF02 finished",
		requests: 1, effects: 0, effectsWhy: "a replay executes nothing",
		skip: skipNoReplay, run: runReplay,
	},
	{
		id: "CF04", checks: "echo_key_header", name: "key echo on CF02's answer and CF03's replay",
		effects: -1, skip: skipEcho, run: runEcho,
	},
	{
		id: "CF05", checks: "idempotency_conflict", name: "same key, different payload",
		requests: 2, effects: 1, effectsWhy: "the first request only: a mismatch executes nothing",
		skip: skipNoMismatch, run: runMismatch,
	},
	{
		id: "CF06", checks: "canonicalization", name: "same key and payload re-serialised (key order, spaces, 1.0)",
		requests: 2, effects: 1, effectsWhy: "the first request only: the second is a replay",
		skip: skipReserialised, run: runReserialised,
	},
	{
		id: "CF07", checks: "at-most-once, inflight", name: "concurrent requests with one fresh key",
		burst: true, effects: 1, effectsWhy: "exactly one execution for the whole burst",
		skip: applicable, run: runConcurrent,
	},
	{
		id: "CF08", checks: "scope operation_key", name: "same key on a second operation",
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
		skip: skipNoMismatch, run: runTypeChange,
	},
	{
		id: "CF11", checks: "exact big integers", name: "same key, 9007199254740993 and then 9007199254740992",
		requests: 2, effects: -1, skip: skipNoBodyFingerprint, run: runBigInteger,
	},
	{
		id: "CF12", checks: "Structured Field key", name: "the key sent quoted after the bare form",
		requests: 2, effects: 1, effectsWhy: "the first request only: the quoted key is the same key",
		skip: skipNoReplay, run: runQuotedKey,
	},
	{
		id: "CF13", checks: "scope tenant_id", name: "same key and payload, another tenant",
		requests: 2, effects: 2, effectsWhy: "one execution per tenant",
		skip: skipScope("tenant_id"), run: runOtherScope("tenant"),
	},
	{
		id: "CF14", checks: "problem+json", name: "the refusals of CF01 and CF05",
		effects: -1, skip: skipNoRefusal, run: runProblemJSON,
	},
	{
		id: "CF15", checks: "key_format", name: "malformed keys: empty, one over max_length, two fields",
		requests: 3, effects: 0, effectsWhy: "a refused request executes nothing",
		skip: skipMissingKey, run: runMalformedKeys,
	},
	{
		id: "CF16", checks: "replayed_header", name: "replay marker on CF03's replay, not on CF02's answer",
		effects: -1, skip: skipMarker, run: runMarker,
	},
	{
		id: "CF17", checks: "scope actor_id", name: "same key and payload, another actor",
		requests: 2, effects: 2, effectsWhy: "one execution per actor",
		skip: skipScope("actor_id"), run: runOtherScope("actor"),
	},
	{
		id: "CF18", checks: "one record across replicas", name: "a replay and a burst spread over every target",
		requests: 2, burst: true, effects: 2, effectsWhy: "one execution for the replayed key, one for the burst",
		skip: skipOneTarget, run: runReplicas,
	},
}

// Skip reasons. Each names the policy field or the input that makes the
// probe inapplicable.

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

func skipEcho(r *Runner) string {
	if !r.policy.echoKey {
		return "http_idempotency.echo_key_header is not true"
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

func skipReserialised(r *Runner) string {
	if fp := r.policy.fingerprint; fp != nil && fp.canonicalization != "canonical_json" {
		return fmt.Sprintf("idempotency_fingerprint.canonicalization is %q: a re-serialised body is another payload", fp.canonicalization)
	}
	if s := skipNoBodyFingerprint(r); s != "" {
		return s
	}
	return skipNoReplay(r)
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

func skipOtherOperation(r *Runner) string {
	if s := skipScope("operation_key")(r); s != "" {
		return s
	}
	if r.second == nil {
		return "the policy declares no second state-changing operation"
	}
	return ""
}

func skipReadOnly(r *Runner) string {
	switch {
	case r.readOnly == nil:
		return "the policy declares no read-only operation outside require_key"
	case r.policy.onMissing.status == 0:
		return "http_idempotency.on_missing declares no status"
	}
	return ""
}

func skipNoRefusal(r *Runner) string {
	if skipMissingKey(r) != "" && skipNoMismatch(r) != "" {
		return "neither CF01 nor CF05 runs, so there is no refusal to check"
	}
	return ""
}

func skipMarker(r *Runner) string {
	if r.policy.replayedHeader() == "" {
		return "idempotency_replay declares no replayed_header"
	}
	return skipNoReplay(r)
}

func skipOneTarget(r *Runner) string {
	if len(r.bases) < 2 {
		return "one target: give --target once per replica to probe replicas"
	}
	return skipNoReplay(r)
}

// The probes.

func runMissingKey(t *trial) {
	resp := t.send(t.newRequest(t.target, "", payload(t.target, newUUID())))
	t.noteRefusal(resp)
	t.checkRefusal(resp, t.policy.onMissing, "on_missing", codeRequired, nil)
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
	t.replayResp = t.send(t.again(t.first))
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

func showHeader(name string, values []string) string {
	if len(values) == 0 {
		return "no " + name + " header"
	}
	return name + ": " + strings.Join(values, ", ")
}

func runMismatch(t *trial) {
	r := t.newRequest(t.target, newUUID(), payload(t.target, newUUID()))
	first := t.establish(r)
	if first == nil {
		return
	}
	other := t.again(r)
	other.body = encode(payload(t.target, newUUID()))
	resp := t.send(other)
	t.noteRefusal(resp)
	t.checkRefusal(resp, t.policy.mismatch, "on_payload_mismatch", codeIfJSON, first)
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
	again := t.again(r)
	again.body = reserialise(body)
	t.checkReplay(first, t.send(again), "the first answer", "the answer to the re-serialised payload")
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

func distinctBodies(resps []*response) int {
	seen := map[string]bool{}
	for _, r := range resps {
		seen[string(r.body)] = true
	}
	return len(seen)
}

func runOtherOperation(t *trial) {
	r := t.newRequest(t.target, newUUID(), payload(t.target, newUUID()))
	first := t.establish(r)
	if first == nil {
		return
	}
	t.expect("2xx: a fresh execution of %s, whatever the key did on %s", t.second.Key, t.target.Key)
	other := t.again(r)
	other.op, other.path, other.body = t.second, t.fillPath(t.second.Path), encode(payload(t.second, newUUID()))
	resp := t.send(other)
	switch {
	case !resp.ok():
		t.fail("%s", resp.summary())
	case t.repeats(first, resp):
		t.fail("%s's answer replayed: %s", t.target.Key, resp.summary())
	}
}

func runReadOnly(t *trial) {
	status := t.policy.onMissing.status
	t.expect("an answer other than %d (on_missing): %s needs no key", status, t.readOnly.Key)
	resp := t.send(t.newRequest(t.readOnly, "", nil))
	if resp.err != nil || resp.status == status {
		t.fail("%s", resp.summary())
	}
}

// runTypeChange judges the status alone: whether the refusal carries the
// declared error_code is CF05's concern, and one defect fails one probe.
func runTypeChange(t *trial) {
	nonce := newUUID()
	r := t.newRequest(t.target, newUUID(), payload(t.target, nonce, field{AmountField, number("100")}))
	first := t.establish(r)
	if first == nil {
		return
	}
	typed := t.again(r)
	typed.body = encode(payload(t.target, nonce, field{AmountField, str("100")}))
	t.checkRefusal(t.send(typed), refusalSpec{status: t.policy.mismatch.status}, "on_payload_mismatch", codeIgnored, first)
}

// unjudgeable is why a probe that must see no replay cannot be judged: a
// target that never replays answers every duplicate afresh.
const unjudgeable = "no earlier probe saw the target replay an answer, so a fresh answer here proves nothing"

func runBigInteger(t *trial) {
	if !t.replaySeen {
		t.skip(unjudgeable)
		return
	}
	nonce := newUUID()
	r := t.newRequest(t.target, newUUID(), payload(t.target, nonce, field{BigField, number(bigExact)}))
	t.expect("%s after %s not answered with the first answer (or the first refused with 400 %s)", bigRounded, bigExact, reference.CodeNotCanonicalizable)
	first := t.send(r)
	if code, _ := errorCode(first.body); first.err == nil && first.status == 400 && code == reference.CodeNotCanonicalizable {
		return // the target refuses what it cannot fingerprint exactly: allowed
	}
	if !first.ok() {
		t.fail("to the first: %s", first.summary())
		return
	}
	rounded := t.again(r)
	rounded.body = encode(payload(t.target, nonce, field{BigField, number(bigRounded)}))
	switch resp := t.send(rounded); {
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
	quoted := t.again(r)
	quoted.key = strconv.Quote(key) // a UUID needs no escape: "<uuid>"
	t.checkReplay(first, t.send(quoted), "the answer to the bare key", "the answer to the quoted key")
}

// runOtherScope sends a completed request again from another tenant or
// actor, which must execute afresh.
func runOtherScope(who string) func(t *trial) {
	return func(t *trial) {
		if !t.replaySeen {
			t.skip(unjudgeable)
			return
		}
		r := t.newRequest(t.target, newUUID(), payload(t.target, newUUID()))
		first := t.establish(r)
		if first == nil {
			return
		}
		other := t.again(r)
		from, to, header := TenantA, TenantB, t.policy.tenantHeader
		if who == "actor" {
			from, to, header = ActorA, ActorB, t.policy.actorHeader
			other.actor = to
		} else {
			other.tenant = to
		}
		t.res.Note = fmt.Sprintf("this probes the target alone, with %s set: it says nothing about the hops in front of it, which must forward %s unchanged (idemlint check judges the chain, spec 6.9)", header, header)
		t.expect("2xx: a fresh execution for %s %s, never %s %s's stored answer", who, to, who, from)
		switch resp := t.send(other); {
		case !resp.ok():
			t.fail("%s", resp.summary())
		case t.repeats(first, resp):
			t.fail("%s %s's answer replayed: %s", who, from, resp.summary())
		}
	}
}

// noteRefusal keeps resp for CF14 when it is a refusal (4xx or 5xx):
// whether the target refused at all is the probe's own concern.
func (t *trial) noteRefusal(resp *response) {
	if resp.err == nil && resp.status >= 400 {
		t.refusals = append(t.refusals, refusalSeen{t.res.ID, resp})
	}
}

// runProblemJSON checks the refusals CF01 and CF05 received (RFC 9457).
func runProblemJSON(t *trial) {
	t.expect("Content-Type application/problem+json, a JSON object with status equal to the HTTP status, title and error_code")
	if len(t.refusals) == 0 {
		t.skip("CF01 and CF05 received no refusal to check")
		return
	}
	var wrong []string
	for _, seen := range t.refusals {
		if problem := problemFaults(seen.resp); problem != "" {
			wrong = append(wrong, seen.probe+"'s answer "+problem)
		}
	}
	if len(wrong) > 0 {
		t.fail("%s", strings.Join(wrong, "; "))
	}
}

// problemFaults says how resp is not an RFC 9457 problem as the spec
// wants it, "" when it is one.
func problemFaults(resp *response) string {
	if resp.err != nil {
		return resp.summary()
	}
	var faults []string
	if ct := resp.header.Get("Content-Type"); !strings.EqualFold(strings.TrimSpace(strings.Split(ct, ";")[0]), "application/problem+json") {
		faults = append(faults, fmt.Sprintf("Content-Type %q", ct))
	}
	obj, ok := jsonObject(resp.body)
	if !ok {
		return strings.Join(append(faults, "a body that is no JSON object"), ", ")
	}
	if s := string(obj["status"]); s != strconv.Itoa(resp.status) {
		if s == "" {
			s = "none"
		}
		faults = append(faults, fmt.Sprintf("status member %s for HTTP %d", s, resp.status))
	}
	for _, m := range []string{"title", "error_code"} {
		if _, has := obj[m]; !has {
			faults = append(faults, "no "+m)
		}
	}
	return strings.Join(faults, ", ")
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

// runReplicas demands one record across the targets: a key completed on
// one target is not executed again by the next, and a burst spread over
// all of them executes once. It judges executions only (spec 6.7): how
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
