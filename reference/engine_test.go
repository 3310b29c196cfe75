package reference

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemlint/idemlint/checks"
)

func TestNewRefusesInvalidPolicy(t *testing.T) {
	tests := []struct {
		name          string
		edits         map[string]any
		rule, pointer string
	}{
		{"schema error", map[string]any{"/idempotency_inflight/policy": "hurry"}, "IDL002", "/idempotency_inflight/policy"},
		{"rule error", map[string]any{"/idempotency_inflight": remove}, "IDL109", "/idempotency_inflight"},
		{"pattern Go cannot compile", map[string]any{"/http_idempotency/key_format/pattern": `^(?<k>\w+)(?=x)$`}, "IDL002", "/http_idempotency/key_format/pattern"},
		{"exclusion of the whole body", map[string]any{"/idempotency_fingerprint/exclude_fields": []any{""}}, "IDL002", "/idempotency_fingerprint/exclude_fields/0"},
		{"zero ttl", map[string]any{
			"/idempotency_storage/ttl":           "0h",
			"/idempotency_storage/ttl_reduction": map[string]any{"declared": true, "reason": "tests"},
		}, "IDL111", "/idempotency_storage/ttl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New("policy.json", policySource(t, "adapter.json", tt.edits))
			var invalid *InvalidPolicyError
			if !errors.As(err, &invalid) {
				t.Fatalf("New = %v, want *InvalidPolicyError", err)
			}
			var found *checks.Finding
			for i, f := range invalid.Findings {
				if f.Rule == tt.rule && f.Pointer == tt.pointer && f.Severity == checks.Error {
					found = &invalid.Findings[i]
				}
			}
			if found == nil {
				t.Fatalf("findings %+v lack an error %s at %s", invalid.Findings, tt.rule, tt.pointer)
			}
			line := fmt.Sprintf("\npolicy.json:%d:%d: error %s %s", found.Line, found.Column, found.Rule, found.Message)
			if msg := err.Error(); !strings.HasPrefix(msg, "policy.json is not a usable adapter policy (") || !strings.Contains(msg, line) {
				t.Errorf("error message %q lacks the finding line %q", msg, line)
			}
		})
	}
}

func TestNewRefusesOtherDocuments(t *testing.T) {
	_, err := New("edge.json", []byte(`{"spec_version": "idemlint.boundary/v1", "boundary": "browser_to_bff", "from": "web", "to": "bff",
		"operations": [{"operation_key": "orders.list", "method": "GET", "path": "/orders"}]}`))
	want := `edge.json is not an adapter policy: its boundary is "browser_to_bff"; want "adapter", or "gateway_to_adapter" with an embedded "adapter" object`
	if err == nil || err.Error() != want {
		t.Errorf("New = %v, want %s", err, want)
	}

	_, err = New("broken.json", []byte(`{"boundary": `))
	var invalid *InvalidPolicyError
	if !errors.As(err, &invalid) || len(invalid.Findings) == 0 || invalid.Findings[0].Rule != "IDL001" {
		t.Errorf("New(truncated JSON) = %v, want IDL001 findings", err)
	}

	if _, err := Load("testdata/absent.json"); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

func TestNewLogsWarnings(t *testing.T) {
	var logs bytes.Buffer
	src := policySource(t, "adapter.json", map[string]any{"/idempotency_fingerprint/canonicalization": "raw_bytes"})
	if _, err := New("policy.json", src, WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `level=WARN msg="policy warning" finding="policy.json:`) || !strings.Contains(logs.String(), "warning IDL106") {
		t.Errorf("logs %q lack the IDL106 warning", logs.String())
	}
}

// NewWithFindings hands the caller the warnings New would log, and logs
// none of them.
func TestNewWithFindingsReturnsWarnings(t *testing.T) {
	var logs bytes.Buffer
	src := policySource(t, "adapter.json", map[string]any{"/idempotency_fingerprint/canonicalization": "raw_bytes"})
	e, findings, err := NewWithFindings("policy.json", src, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, f := range findings {
		rules = append(rules, f.Rule+" "+f.Severity.String())
	}
	// The memory store of the test policy is IDL113's warning.
	if want := []string{"IDL106 warning", "IDL113 warning"}; !slices.Equal(rules, want) || e.Policy() == nil {
		t.Errorf("NewWithFindings gave %v, want the engine and %v", rules, want)
	}
	if logs.Len() != 0 {
		t.Errorf("NewWithFindings logged %q, want nothing", logs.String())
	}
}

// TestEmbeddedPolicy runs the policy embedded in a gateway_to_adapter
// document: its key header, on_missing, scope sources, sha512, reject and
// reexecute all come from that document.
func TestEmbeddedPolicy(t *testing.T) {
	e, err := Load("testdata/embedded.json", WithLogger(quietLogger))
	if err != nil {
		t.Fatal(err)
	}
	a := &app{}
	h := e.Middleware(a)
	capture := func(key, org string) call {
		c := call{method: "POST", path: "/payments/p1/capture", body: `{"amount":100}`, header: http.Header{"X-Org": {org}}}
		if key != "" {
			c.header.Set("Idempotency-Key", key)
		}
		return c
	}

	wantProblem(t, do(h, capture("", "o1")), 428, "key_missing")
	first := do(h, capture("k1", "o1"))
	if first.Code != 201 || first.Header().Get("Idempotency-Key") != "" {
		t.Fatalf("first = %d, key echoed %q (echo_key_header is false)", first.Code, first.Header().Get("Idempotency-Key"))
	}
	if replay := do(h, capture("k1", "o1")); replay.Body.String() != first.Body.String() {
		t.Errorf("replay body %s, want %s", replay.Body, first.Body)
	}
	if other := do(h, capture("k1", "o2")); other.Body.String() == first.Body.String() {
		t.Error("another org (x-org, the tenant source) got the first org's response")
	}
	if got := a.runs.Load(); got != 2 {
		t.Errorf("handler ran %d times, want 2", got)
	}
	if !strings.HasPrefix(e.fp.algorithm, "sha512") || !e.reexecute || e.waitTimeout != 0 {
		t.Errorf("engine: algorithm %s, reexecute %v, wait %v", e.fp.algorithm, e.reexecute, e.waitTimeout)
	}
}

// handle runs one Engine.Handle call with a handler that counts.
func handleOnce(e *Engine, runs *int, req *Request, resp Response, err error) Reply {
	return e.Handle(context.Background(), req, func(context.Context) (Response, error) {
		*runs++
		return resp, err
	})
}

func TestHandleCoreAPI(t *testing.T) {
	e := newEngine(t, nil)
	req := &Request{Method: "POST", Path: "/orders", Header: http.Header{"X-Idempotency-Key": {"k1"}}, Body: []byte(`{"a":1}`)}
	created := Response{Status: 201, Header: http.Header{"Content-Type": {"application/json"}, "Date": {"now"}}, Body: []byte(`{"id":1}`)}
	runs := 0

	first := handleOnce(e, &runs, req, created, nil)
	if first.Outcome != Executed || first.Key != "k1" || first.Operation != "orders.create" || first.Status != 201 || first.Header.Get("Date") != "now" {
		t.Errorf("first reply %+v", first)
	}
	second := handleOnce(e, &runs, req, Response{}, nil)
	if second.Outcome != Replayed || string(second.Body) != `{"id":1}` || second.Header.Get("Content-Type") != "application/json" || second.Header.Get("Date") != "" {
		t.Errorf("replay %+v: want the stored body and only the replayed headers", second)
	}
	get := handleOnce(e, &runs, &Request{Method: "GET", Path: "/orders/1", Header: http.Header{}}, Response{}, nil)
	if get.Outcome != Bypassed || get.Operation != "orders.get" {
		t.Errorf("GET reply %+v, want Bypassed", get)
	}
	if runs != 1 {
		t.Errorf("handler ran %d times, want 1 (replays and bypassed requests never run it)", runs)
	}

	failing := &Request{Method: "POST", Path: "/orders", Header: http.Header{"X-Idempotency-Key": {"k2"}}}
	failed := handleOnce(e, &runs, failing, Response{}, errors.New("database down"))
	if failed.Outcome != Executed || failed.Status != 500 || !strings.Contains(string(failed.Body), `"error_code":"handler_error"`) {
		t.Errorf("failed reply %+v %s", failed, failed.Body)
	}
	rec, ok, _ := e.store.Get(context.Background(), e.identity(&e.ops[0], failing.Header, "k2"))
	if !ok || rec.State != Failed || rec.Error != "error: database down" {
		t.Errorf("record of the failed attempt: %+v", rec)
	}
}

// TestConcurrentSameKey sends 64 requests with one key at once, under the
// wait policy: the handler runs once and all 64 get the same body.
func TestConcurrentSameKey(t *testing.T) {
	const n = 64
	e := newEngine(t, nil)
	a := &app{release: make(chan struct{})}
	h := e.Middleware(a)
	responses := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { responses[i] = do(h, call{key: "same", body: `{"qty":1}`}) })
	}
	// Release the handler only when all others wait for it, so every
	// duplicate really arrived while the attempt was running.
	eventually(t, "63 duplicates wait", func() bool { return e.waitingTotal() == n-1 })
	close(a.release)
	wg.Wait()

	if got := a.runs.Load(); got != 1 {
		t.Fatalf("handler ran %d times, want exactly 1", got)
	}
	replays := 0
	for i, w := range responses {
		if w.Code != 201 || w.Body.String() != responses[0].Body.String() {
			t.Errorf("response %d: %d %s, want 201 %s", i, w.Code, w.Body, responses[0].Body)
		}
		if w.Header().Get("Idempotent-Replayed") == "true" {
			replays++
		}
	}
	if replays != n-1 {
		t.Errorf("%d responses are marked replayed, want %d", replays, n-1)
	}
	if got := e.waitingTotal(); got != 0 {
		t.Errorf("%d waiter entries left behind", got)
	}
}

// TestConcurrentReject: under the reject policy the duplicates of a
// running attempt get the inflight status at once.
func TestConcurrentReject(t *testing.T) {
	const n = 64
	e := newEngine(t, map[string]any{"/idempotency_inflight": map[string]any{"policy": "reject", "status": 409}})
	a := &app{release: make(chan struct{}), started: make(chan struct{}, 1)}
	h := e.Middleware(a)
	first := make(chan *httptest.ResponseRecorder)
	go func() { first <- do(h, call{key: "same", body: `{}`}) }()
	<-a.started

	var wg sync.WaitGroup
	for range n - 1 {
		wg.Go(func() { wantProblem(t, do(h, call{key: "same", body: `{}`}), 409, CodeInProgress) })
	}
	wg.Wait() // every duplicate was answered while the first still runs
	close(a.release)
	if w := <-first; w.Code != 201 {
		t.Fatalf("first request: %d %s", w.Code, w.Body)
	}
	if w := do(h, call{key: "same", body: `{}`}); w.Code != 201 || w.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("duplicate after the end: %d, replayed %q", w.Code, w.Header().Get("Idempotent-Replayed"))
	}
	if got := a.runs.Load(); got != 1 {
		t.Errorf("handler ran %d times, want 1", got)
	}
}

// TestManyKeysInParallel mixes 128 keys, each sent 4 times, over 512
// concurrent requests: one execution per key, one body per key.
func TestManyKeysInParallel(t *testing.T) {
	const keys, dup = 128, 4
	e := newEngine(t, nil)
	a := &app{}
	h := e.Middleware(a)
	bodies := make([][dup]string, keys)
	var wg sync.WaitGroup
	for d := range dup {
		for k := range keys {
			wg.Go(func() {
				w := do(h, call{key: "key-" + strconv.Itoa(k), body: `{"k":` + strconv.Itoa(k) + `}`})
				if w.Code != 201 {
					t.Errorf("key %d: status %d", k, w.Code)
				}
				bodies[k][d] = w.Body.String()
			})
		}
	}
	wg.Wait()
	if got := a.runs.Load(); got != keys {
		t.Errorf("handler ran %d times, want %d", got, keys)
	}
	for k, b := range bodies {
		for d := 1; d < dup; d++ {
			if b[d] != b[0] {
				t.Errorf("key %d: bodies differ: %s and %s", k, b[0], b[d])
			}
		}
		if !strings.HasSuffix(b[0], `"request":{"k":`+strconv.Itoa(k)+`}}`) {
			t.Errorf("key %d answered with another key's body %s", k, b[0])
		}
	}
}

func TestWaitTimeout(t *testing.T) {
	e := newEngine(t, map[string]any{"/idempotency_inflight/wait_timeout_ms": 50})
	a := &app{release: make(chan struct{}), started: make(chan struct{}, 1)}
	h := e.Middleware(a)
	first := make(chan *httptest.ResponseRecorder)
	go func() { first <- do(h, call{key: "slow", body: `{}`}) }()
	<-a.started

	start := time.Now()
	w := do(h, call{key: "slow", body: `{}`})
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Errorf("duplicate answered after %v, before wait_timeout_ms", waited)
	}
	wantProblem(t, w, 409, CodeInProgress)
	if w.Header().Get("X-Idempotency-Key") != "slow" {
		t.Error("the timeout answer does not echo the key")
	}
	close(a.release)
	<-first
	if w := do(h, call{key: "slow", body: `{}`}); w.Code != 201 || a.runs.Load() != 1 {
		t.Errorf("after the attempt ended: %d, %d runs; want a replay", w.Code, a.runs.Load())
	}
}

// TestWaitAcrossEngines: two engines share a store, as two processes
// share a database. A duplicate on the second engine learns of the end of
// the first engine's attempt by polling, with no notification.
func TestWaitAcrossEngines(t *testing.T) {
	store := NewMemoryStore(MemoryOptions{})
	one, two := newEngine(t, nil, WithStore(store)), newEngine(t, nil, WithStore(store))
	a := &app{release: make(chan struct{}), started: make(chan struct{}, 1)}
	first := make(chan *httptest.ResponseRecorder)
	go func() { first <- do(one.Middleware(a), call{key: "shared", body: `{}`}) }()
	<-a.started

	second := make(chan *httptest.ResponseRecorder)
	go func() { second <- do(two.Middleware(a), call{key: "shared", body: `{}`}) }()
	eventually(t, "the duplicate waits", func() bool { return two.waitingTotal() == 1 })
	close(a.release)
	w1, w2 := <-first, <-second
	if w2.Code != 201 || w2.Body.String() != w1.Body.String() || a.runs.Load() != 1 {
		t.Errorf("duplicate on the other engine: %d %s, %d runs; want a replay of %s", w2.Code, w2.Body, a.runs.Load(), w1.Body)
	}
}

// failingStore fails every call.
type failingStore struct{}

var errStoreDown = errors.New("connection refused")

func (failingStore) Create(context.Context, string, Record, time.Duration) (Record, bool, error) {
	return Record{}, false, errStoreDown
}

func (failingStore) Renew(context.Context, string, string, time.Duration) error {
	return errStoreDown
}

func (failingStore) Finish(context.Context, string, string, State, Result, time.Duration) error {
	return errStoreDown
}

func (failingStore) Release(context.Context, string, string) error { return errStoreDown }

func (failingStore) Get(context.Context, string) (Record, bool, error) {
	return Record{}, false, errStoreDown
}

func TestStoreUnavailable(t *testing.T) {
	var logs bytes.Buffer
	e := newEngine(t, nil, WithStore(failingStore{}), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	a := &app{}
	wantProblem(t, do(e.Middleware(a), call{key: "k", body: `{}`}), 503, CodeStoreUnavailable)
	if a.runs.Load() != 0 {
		t.Error("the handler ran without a record: at-most-once cannot be promised")
	}
	if !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("logs %q lack the store error", logs.String())
	}
}

// TestAttemptWakesWaiters: the end of an attempt closes the channel its
// local waiters block on (polling is only the fallback), and the last
// waiter to leave removes the entry.
func TestAttemptWakesWaiters(t *testing.T) {
	e := newEngine(t, nil)
	header := http.Header{"X-Idempotency-Key": {"k"}}
	id := e.identity(&e.ops[0], header, "k")
	w := e.waiters.subscribe(id)
	runs := 0
	handleOnce(e, &runs, &Request{Method: "POST", Path: "/orders", Header: header}, Response{Status: 201}, nil)
	select {
	case <-w.done:
	default:
		t.Fatal("the attempt ended without waking its waiters")
	}
	e.waiters.unsubscribe(id, w)

	a, b := e.waiters.subscribe("x"), e.waiters.subscribe("x")
	if a != b {
		t.Fatal("two waiters for one identity got different channels")
	}
	e.waiters.unsubscribe("x", a)
	if e.waitingTotal() != 1 {
		t.Fatal("the entry went away while a waiter remained")
	}
	e.waiters.unsubscribe("x", b)
	if len(e.waiters.m) != 0 {
		t.Errorf("entries left behind: %v", e.waiters.m)
	}
}

// TestOneVerdictOnWhatCannotRun holds the one verdict (docs/format.md,
// Bounds: one verdict for a policy): each
// missing piece the engine needs is an error finding of the rule that
// demands it, so New refuses the policy; and configure, driven directly as
// if that rule had been turned off, still configures without failing.
func TestOneVerdictOnWhatCannotRun(t *testing.T) {
	tests := []struct {
		edits         map[string]any
		rule, pointer string
	}{
		{map[string]any{"/idempotency_scope": remove}, "IDL107", "/idempotency_scope"},
		{map[string]any{"/idempotency_scope": []any{"service", "operation_key"}}, "IDL107", "/idempotency_scope"},
		{map[string]any{"/idempotency_fingerprint": remove}, "IDL106", "/idempotency_fingerprint"},
		{map[string]any{"/idempotency_fingerprint/canonicalization": remove}, "IDL106", "/idempotency_fingerprint/canonicalization"},
		{map[string]any{"/idempotency_fingerprint/inputs": []any{}}, "IDL106", "/idempotency_fingerprint/inputs"},
		{map[string]any{"/idempotency_replay": remove}, "IDL108", "/idempotency_replay"},
		{map[string]any{"/idempotency_replay/on_failed": remove}, "IDL108", "/idempotency_replay/on_failed"},
		{map[string]any{"/idempotency_inflight": remove}, "IDL109", "/idempotency_inflight"},
		{map[string]any{"/idempotency_inflight/policy": remove}, "IDL109", "/idempotency_inflight/policy"},
		{map[string]any{"/idempotency_inflight/wait_timeout_ms": remove}, "IDL109", "/idempotency_inflight/wait_timeout_ms"},
		{map[string]any{"/idempotency_inflight": map[string]any{"policy": "reject"}}, "IDL109", "/idempotency_inflight/status"},
		{map[string]any{"/idempotency_conflict": remove}, "IDL110", "/idempotency_conflict"},
		{map[string]any{"/idempotency_conflict": map[string]any{}}, "IDL110", "/idempotency_conflict/on_payload_mismatch"},
		{map[string]any{"/idempotency_conflict/on_payload_mismatch/error_code": remove}, "IDL110", "/idempotency_conflict/on_payload_mismatch/error_code"},
		{map[string]any{"/idempotency_conflict/on_payload_mismatch/status": remove}, "IDL110", "/idempotency_conflict/on_payload_mismatch/status"},
		{map[string]any{"/idempotency_storage": remove}, "IDL111", "/idempotency_storage"},
		{map[string]any{"/idempotency_storage/ttl": remove}, "IDL111", "/idempotency_storage/ttl"},
		{map[string]any{"/idempotency_storage/ttl": "106752d"}, "IDL111", "/idempotency_storage/ttl"},
		{map[string]any{"/idempotency_storage/ttl": "3651d"}, "IDL111", "/idempotency_storage/ttl"},
		{map[string]any{"/idempotency_storage/ttl": "99999999999999999999999d"}, "IDL111", "/idempotency_storage/ttl"},
		{map[string]any{"/idempotency_inflight/wait_timeout_ms": 10000000000000}, "IDL002", "/idempotency_inflight/wait_timeout_ms"},
		{map[string]any{"/http_idempotency/key_format": map[string]any{"pattern": "("}}, "IDL002", "/http_idempotency/key_format/pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.pointer, func(t *testing.T) {
			src := policySource(t, "adapter.json", tt.edits)
			doc, findings := checks.CheckDocument("policy.json", src)
			found := false
			for _, f := range findings {
				found = found || (f.Severity == checks.Error && f.Rule == tt.rule && f.Pointer == tt.pointer)
			}
			if !found {
				t.Errorf("findings %v lack an error %s at %s", findings, tt.rule, tt.pointer)
			}
			if _, err := New("policy.json", src); err == nil {
				t.Error("New accepted the policy")
			}
			(&Engine{maxBody: DefaultMaxBodyBytes}).configure(doc)
		})
	}
}

// createFirstMemory is a MemoryStore that the engine admits requests to
// as it does a store on a server, with Create alone; it counts the calls.
type createFirstMemory struct {
	*MemoryStore
	gets, creates atomic.Int64
}

func (s *createFirstMemory) CreateFirst() bool { return true }

func (s *createFirstMemory) Get(ctx context.Context, id string) (Record, bool, error) {
	s.gets.Add(1)
	return s.MemoryStore.Get(ctx, id)
}

func (s *createFirstMemory) Create(ctx context.Context, id string, rec Record, lease time.Duration) (Record, bool, error) {
	s.creates.Add(1)
	return s.MemoryStore.Create(ctx, id, rec, lease)
}

// TestCreateFirstAdmission: on a CreateFirstStore a request costs one
// Create and no Get, and every decision is the one a Get would have led
// to: execute, replay (also of a re-serialised payload), mismatch, and
// no store call at all for a payload that cannot be fingerprinted.
func TestCreateFirstAdmission(t *testing.T) {
	store := &createFirstMemory{MemoryStore: NewMemoryStore(MemoryOptions{})}
	e := newEngine(t, nil, WithStore(store))
	a := &app{}
	h := e.Middleware(a)
	steps := []struct {
		name          string
		body          string
		status        int
		replayed      string
		storeCreates  int64 // Create calls after the step
		handlerRuns   int64 // executions after the step
		wantErrorCode string
	}{
		{"new key", `{"qty":1,"sku":"P1"}`, 201, "", 1, 1, ""},
		{"byte-identical retry", `{"qty":1,"sku":"P1"}`, 201, "true", 2, 1, ""},
		{"re-serialised retry", `{ "sku": "P\u0031", "qty": 1.0 }`, 201, "true", 3, 1, ""},
		{"other payload", `{"qty":2,"sku":"P1"}`, 422, "", 4, 1, "idempotency_key_reused"},
		{"not canonicalisable", `{"qty":1,"qty":2}`, 400, "", 4, 1, CodeNotCanonicalizable},
	}
	var first string
	for _, step := range steps {
		w := do(h, call{key: "k", body: step.body})
		if step.wantErrorCode != "" {
			wantProblem(t, w, step.status, step.wantErrorCode)
		} else if w.Code != step.status || w.Header().Get("Idempotent-Replayed") != step.replayed {
			t.Errorf("%s: %d, replayed %q; want %d, %q", step.name, w.Code, w.Header().Get("Idempotent-Replayed"), step.status, step.replayed)
		}
		if first == "" {
			first = w.Body.String()
		} else if step.replayed != "" && w.Body.String() != first {
			t.Errorf("%s: replayed %s, want %s", step.name, w.Body, first)
		}
		if gets, creates, runs := store.gets.Load(), store.creates.Load(), a.runs.Load(); gets != 0 || creates != step.storeCreates || runs != step.handlerRuns {
			t.Errorf("after %s: %d Get and %d Create calls, %d executions; want 0, %d and %d", step.name, gets, creates, runs, step.storeCreates, step.handlerRuns)
		}
	}
}

// TestCreateFirstConcurrentDuplicates: duplicates that find the attempt
// running in Create's answer wait for it and replay it, and a failed
// attempt is re-executed under on_failed reexecute.
func TestCreateFirstConcurrentDuplicates(t *testing.T) {
	const n = 16
	store := &createFirstMemory{MemoryStore: NewMemoryStore(MemoryOptions{})}
	e := newEngine(t, map[string]any{"/idempotency_replay/on_failed": "reexecute"}, WithStore(store))
	a := &app{}
	a.serve = func(w http.ResponseWriter, _ *http.Request, run int64) {
		if run == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "run %d", run)
	}
	h := e.Middleware(a)
	if w := do(h, call{key: "same", body: `{}`}); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("failing first attempt: %d", w.Code)
	}
	// The failed record was released: the next request executes, its
	// duplicates wait for it.
	a.release = make(chan struct{})
	responses := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { responses[i] = do(h, call{key: "same", body: `{}`}) })
	}
	eventually(t, "the duplicates wait", func() bool { return e.waitingTotal() == n-1 })
	close(a.release)
	wg.Wait()
	if got := a.runs.Load(); got != 2 {
		t.Fatalf("handler ran %d times, want 2: the failure, then one execution", got)
	}
	for i, w := range responses {
		if w.Code != http.StatusCreated || w.Body.String() != "run 2" {
			t.Errorf("response %d: %d %q, want 201 \"run 2\"", i, w.Code, w.Body)
		}
	}
}
