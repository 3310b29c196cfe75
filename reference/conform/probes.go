package conform

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/idemlint/idemlint/reference"
)

// Probe is one conform probe, documented like a lint rule (checks.Rule):
// the rows of the tables of spec sections 5 and 6.6, each with why it
// matters, what it sends, when it passes and when it is skipped.
// "idemlint probes" lists them and "idemlint explain CF07" explains one.
// Adding a probe is one entry in the table probes.
type Probe struct {
	ID     string `json:"id"`     // "CF07"; never renamed: the spec and every output name it
	Name   string `json:"name"`   // what it sends, in a few words: every output's probe column
	Checks string `json:"checks"` // the policy rule or property it checks
	Passes string `json:"passes"` // when it passes, in one line: README's probe table
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
// parameters with its id.
var probes = []Probe{
	{
		ID: "CF01", Checks: "on_missing", Name: "key-required request without the key",
		Passes: "status on_missing.status, and the body carries error_code (the declared one, if any)",
		Why: `A key-required operation that runs without a key leaves the client no
safe retry: a lost answer followed by a retry executes twice. Refusing
keyless requests is what makes the key required in practice, and the
error_code tells the client what to fix.`,
		Sends:    `One request with a fresh payload and no key header.`,
		Skipped:  `When the operation is not in http_idempotency.require_key, or on_missing declares no status.`,
		requests: 1, effects: 0, effectsWhy: "a refused request executes nothing",
		skip: skipMissingKey, run: runMissingKey,
	},
	{
		ID: "CF02", Checks: "fresh execution", Name: "first request with a fresh key",
		Passes: "2xx",
		Why: `A target that refuses a well-formed request with a fresh key is not
usable at all, and the probes after it build on its answer: CF03 replays
it, CF04 and CF16 read its headers, and its "id" member fills the path
parameters ({id}) of every later probe.`,
		Sends:    `One request with a fresh key and a fresh payload.`,
		Skipped:  `Never.`,
		requests: 1, effects: 1, effectsWhy: "one execution",
		skip: applicable, run: runFresh,
	},
	{
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
	},
	{
		ID: "CF04", Checks: "echo_key_header", Name: "key echo on CF02's answer and CF03's replay",
		Passes: "CF02's answer and CF03's replay each carry one key header, with the key sent",
		Why: `A client, proxy or log that correlates answers by the echoed key must see
the key it sent: an echo of another key, or two, points the trace at the
wrong request.`,
		Sends:   `Nothing of its own: it reads CF02's answer and CF03's replay.`,
		Skipped: `When http_idempotency.echo_key_header is not true.`,
		effects: -1, skip: skipEcho, run: runEcho,
	},
	{
		ID: "CF05", Checks: "idempotency_conflict", Name: "same key, different payload",
		Passes: "status on_payload_mismatch.status, with error_code (the declared one) when the body is JSON",
		Why: `The same key with another payload is a reused key or a changed retry.
Replaying the first answer hides the change from the client, and
executing the second payload makes the key meaningless; the conflict
status tells the client its key is reused.`,
		Sends: `A request with a fresh key and payload, then the same key with another
payload. On failure it says whether the 2xx that came was a replay of the
first answer (same body) or a re-execution.`,
		Skipped: `When on_payload_mismatch declares no status, the policy declares no
idempotency_fingerprint, or its inputs leave out the body (every body is
then the same payload).`,
		requests: 2, effects: 1, effectsWhy: "the first request only: a mismatch executes nothing",
		skip: skipNoMismatch, run: runMismatch,
	},
	{
		ID: "CF06", Checks: "canonicalization", Name: "same key and payload re-serialised (key order, spaces, 1.0)",
		Passes: "a replay of the first answer, as CF03 judges one",
		Why: `Clients, proxies and SDK versions spell one JSON value differently. With
canonical_json, a retry re-serialised on the way is still the same
payload; a target that fingerprints the bytes refuses a harmless retry as
a conflict, or executes it again.`,
		Sends: `A request with a fresh key, then the same key with the same JSON value
re-serialised: members in another order, other whitespace, and an
integer written as 1.0 (the member idemlint_probe_n, 1, is added when
the body has no integer of its own).`,
		Skipped: `When canonicalization is not canonical_json, when the fingerprint leaves
out the body or is not declared, or when the policy promises no replay
(as CF03).`,
		requests: 2, effects: 1, effectsWhy: "the first request only: the second is a replay",
		skip: skipReserialised, run: runReserialised,
	},
	{
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
		burst:   true, effects: 1, effectsWhy: "exactly one execution for the whole burst",
		skip: applicable, run: runConcurrent,
	},
	{
		ID: "CF08", Checks: "scope operation_key", Name: "same key on a second operation",
		Passes: "a 2xx fresh execution of the second operation, never the first operation's stored answer",
		Why: `Clients often draw keys from one generator for every endpoint. When
records are not scoped by operation, a key used to create an order and
then to refund it gets the order's stored answer, or a conflict, instead
of a refund.`,
		Sends: `A request with a fresh key to the probed operation, then the same key to
a second state-changing operation, with that operation's payload.`,
		Skipped: `When the policy declares no idempotency_scope, its scope does not list
operation_key (operations then share records, which IDL107 reports), or
it declares no second state-changing operation.`,
		requests: 2, effects: 2, effectsWhy: "one execution per operation",
		skip: skipOtherOperation, run: runOtherOperation,
	},
	{
		ID: "CF09", Checks: "read-only passthrough", Name: "a read-only operation without a key",
		Passes: "any answer other than on_missing.status",
		Why: `Reads carry no key: a middleware that demands one on every route rather
than on the operations require_key lists breaks every client and cache
that reads.`,
		Sends: `One request to a read-only operation outside require_key, without a key
and without a body.`,
		Skipped: `When the policy declares no read-only operation outside require_key, or
on_missing declares no status to tell a refusal by.`,
		requests: 1, effects: -1, skip: skipReadOnly, run: runReadOnly,
	},
	{
		ID: "CF10", Checks: "no type coercion", Name: `same key, a value sent as 100 and then as "100"`,
		Passes: "status on_payload_mismatch.status, judged on the status alone (error_code is CF05's concern)",
		Why: `100 and "100" are different payloads, which a handler may treat
differently. A fingerprint that coerces types takes the second for a
retry of the first and answers a request the client did not send with
the stored answer.`,
		Sends: `A request with a fresh key and the member idemlint_probe_amount: 100,
then the same key and payload with idemlint_probe_amount: "100".`,
		Skipped: `As CF05: when on_payload_mismatch declares no status, or the fingerprint
is not declared or leaves out the body.`,
		requests: 2, effects: 1, effectsWhy: "the first request only: a mismatch executes nothing",
		skip: skipNoMismatch, run: runTypeChange,
	},
	{
		ID: "CF11", Checks: "exact big integers", Name: "same key, 9007199254740993 and then 9007199254740992",
		Passes: "the second answer is no replay of the first (or the first is refused: 400 " + reference.CodeNotCanonicalizable + ")",
		Why: `9007199254740993 and 9007199254740992 round to one IEEE double. A
fingerprint computed after parsing numbers into float64 takes two
payloads that differ in an id or an amount for one, and replays an
answer to the other request.`,
		Sends: `A request with a fresh key and the member idemlint_probe_big:
9007199254740993, then the same key and payload with 9007199254740992,
written as those digits: no float64 is involved. A target may refuse the
first with 400 and error_code ` + reference.CodeNotCanonicalizable + `: it refuses
what it cannot fingerprint exactly.`,
		Skipped: `When the fingerprint is not declared or leaves out the body; and,
unjudgeable, when no earlier probe saw the target replay at all: against
a target that never replays, a fresh answer proves nothing.`,
		requests: 2, effects: -1, skip: skipNoBodyFingerprint, run: runBigInteger,
	},
	{
		ID: "CF12", Checks: "Structured Field key", Name: "the key sent quoted after the bare form",
		Passes: "a replay of the first answer: the quoted key is the same key",
		Why: `The key header is an RFC 8941 Structured Field String, which clients and
proxies may send quoted. A target that takes abc and "abc" for two keys
executes such a retry again.`,
		Sends: `A request with a fresh key sent bare, then the same request with the key
quoted ("<uuid>").`,
		Skipped:  `When the policy promises no replay (as CF03).`,
		requests: 2, effects: 1, effectsWhy: "the first request only: the quoted key is the same key",
		skip: skipNoReplay, run: runQuotedKey,
	},
	{
		ID: "CF13", Checks: "scope tenant_id", Name: "same key and payload, another tenant",
		Passes: "a 2xx fresh execution for the second tenant, never the first tenant's stored answer",
		Why: `Clients choose keys, so two tenants can send one key, by chance or on
purpose. Records not scoped by tenant hand one tenant the other's stored
response: a data leak.`,
		Sends: `A request with a fresh key from tenant idemlint-probe-tenant-a (the tenant
header of scope_sources), then the same key and payload from
idemlint-probe-tenant-b. It probes the target alone, sending the header
itself, and its note says so: whether the hops in front forward the
header is for idemlint check to judge (spec 6.9).`,
		Skipped: `When the policy declares no idempotency_scope or its scope does not list
tenant_id (tenants then share records); and, unjudgeable, when no earlier
probe saw the target replay at all.`,
		requests: 2, effects: 2, effectsWhy: "one execution per tenant",
		skip: skipScope("tenant_id"), run: runOtherScope("tenant"),
	},
	{
		ID: "CF14", Checks: "problem+json", Name: "the refusals of CF01 and CF05",
		Passes: "each refusal is application/problem+json: a JSON object whose status is the HTTP status, with title and error_code",
		Why: `Clients handle refusals in one place when they follow RFC 9457. A body
that is no problem object, or lacks error_code, leaves a client unable
to tell a missing key from a reused one, and so unable to react.`,
		Sends: `Nothing of its own: it reads the refusals (4xx and 5xx) that CF01 and
CF05 received.`,
		Skipped: `When neither CF01 nor CF05 runs, or when they received no refusal.`,
		effects: -1, skip: skipNoRefusal, run: runProblemJSON,
	},
	{
		ID: "CF15", Checks: "key_format", Name: "malformed keys: empty, one over max_length, two fields",
		Passes: "each answered on_missing.status, nothing executed",
		Why: `A key the policy forbids must be refused like a missing one: an empty key
makes every such client share one record, an oversized one grows the
store, and two key header fields leave the key to whichever proxy joins
them.`,
		Sends: `Three requests with fresh payloads: one with an empty key, one with a key
one character over key_format.max_length, one with two key header
fields.`,
		Skipped: `As CF01: when the operation is not in require_key, or on_missing
declares no status.`,
		requests: 3, effects: 0, effectsWhy: "a refused request executes nothing",
		skip: skipMissingKey, run: runMalformedKeys,
	},
	{
		ID: "CF16", Checks: "replayed_header", Name: "replay marker on CF03's replay, not on CF02's answer",
		Passes: "the replayed header says true on CF03's replay, and is absent (or false) on CF02's answer",
		Why: `A client that must tell a replay from a fresh execution, to book a
payment once or to log a retry, reads the marker; a marker on a fresh
answer is as wrong as none on a replay.`,
		Sends: `Nothing of its own: it reads CF02's answer and CF03's replay.`,
		Skipped: `When idempotency_replay declares no replayed_header, or the policy
promises no replay (as CF03).`,
		effects: -1, skip: skipMarker, run: runMarker,
	},
	{
		ID: "CF17", Checks: "scope actor_id", Name: "same key and payload, another actor",
		Passes: "a 2xx fresh execution for the second actor, never the first actor's stored answer",
		Why: `Within one tenant, two users can send one key. Records not scoped by actor
replay one user's response, with their order or their data, to another.`,
		Sends: `As CF13, from actor idemlint-probe-actor-a and then
idemlint-probe-actor-b (the actor header of scope_sources). It probes
the target alone, and its note says so.`,
		Skipped: `When the policy declares no idempotency_scope or its scope does not list
actor_id (actors then share records); and, unjudgeable, when no earlier
probe saw the target replay at all.`,
		requests: 2, effects: 2, effectsWhy: "one execution per actor",
		skip: skipScope("actor_id"), run: runOtherScope("actor"),
	},
	{
		ID: "CF18", Checks: "one record across replicas", Name: "a replay and a burst spread over every target",
		Passes: "exactly one execution per key across the targets, judged on executions only",
		Why: `Replicas that keep their records apart each execute the retry that lands
on them: behind a load balancer, at-most-once then holds only while
retries happen to reach the same replica.`,
		Sends: `A request with a fresh key to one target and its duplicate to the next,
then --concurrency copies of another fresh request spread over every
target. It judges executions only (spec 6.7): answers that break the
replay or inflight policy are CF03's and CF07's concern. Without an
effects counter (--effects-url), a 2xx with a body of its own is an
execution and any other answer is not, which its note counts.`,
		Skipped: `When there is one target (give --target once per replica), or the
policy promises no replay (as CF03).`,
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
