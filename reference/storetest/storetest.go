// Package storetest is the conformance suite of reference.Store: every
// store implementation runs it from its own tests,
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) reference.Store { return newEmptyStore(t) })
//	}
//
// and passes it before the engine may use it. The suite measures leases
// and expiry in real time (the store's own clock, which the suite cannot
// move), with leases of a fraction of a second: it takes a few seconds.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/reference"
)

// NewStore returns an empty store for one test, cleaned up when the test
// ends; stores from different calls must not see each other's records.
type NewStore func(t *testing.T) reference.Store

// Timing of the suite. Each check is robust in one direction: a lease
// that must still hold is long (a loaded machine may pause for a good
// part of a second), and one that must have lapsed is short and waited
// out several times over.
const (
	longLease  = 10 * time.Second
	shortLease = 100 * time.Millisecond
	lapse      = 4 * shortLease
	// tolerance absorbs the stores' time resolution (milliseconds).
	tolerance = time.Millisecond
)

// Run runs every check of the suite on stores from newStore.
func Run(t *testing.T, newStore NewStore) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s reference.Store)
	}{
		{"CreateIfAbsent", testCreateIfAbsent},
		{"OneWinnerAmongConcurrentCreators", testOneWinner},
		{"StoreClock", testStoreClock},
		{"RenewKeepsTheLease", testRenew},
		{"LapsedLeaseIsTakenOver", testTakeover},
		{"StaleWorkerFencedAfterExpiryAndRecreate", testFencedAfterRecreate},
		{"Transitions", testTransitions},
		{"TTLCountsFromCompletion", testTTL},
		{"Release", testRelease},
		{"LargeBinaryResponse", testLargeResponse},
		{"BinaryIdentities", testBinaryIdentities},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newStore(t))
		})
	}
	for _, onFailed := range []string{"stored_response", "reexecute"} {
		t.Run("EngineOnFailed_"+onFailed, func(t *testing.T) {
			t.Parallel()
			testEngineOnFailed(t, newStore(t), onFailed)
		})
	}
	t.Run("EngineConcurrentDuplicates", func(t *testing.T) {
		t.Parallel()
		testEngineDuplicates(t, newStore(t))
	})
	t.Run("EngineReplaysLargeBody", func(t *testing.T) {
		t.Parallel()
		testEngineLargeReplay(t, newStore(t))
	})
}

var (
	ctx   = context.Background()
	quiet = slog.New(slog.DiscardHandler)
)

// request is the part of a record the engine chooses.
func request(fp string) reference.Record {
	return reference.Record{Key: "key-1", Operation: "orders.create", Fingerprint: fp, RawDigest: [32]byte{1, 2, 3}}
}

func create(t *testing.T, s reference.Store, id, fp string, lease time.Duration) reference.Record {
	t.Helper()
	rec, created, err := s.Create(ctx, id, request(fp), lease)
	if err != nil || !created {
		t.Fatalf("Create(%q) = created %v, %v; want a new record", id, created, err)
	}
	return rec
}

func get(t *testing.T, s reference.Store, id string) (reference.Record, bool) {
	t.Helper()
	rec, ok, err := s.Get(ctx, id)
	if err != nil {
		t.Fatalf("Get(%q): %v", id, err)
	}
	return rec, ok
}

func mustGet(t *testing.T, s reference.Store, id string) reference.Record {
	t.Helper()
	rec, ok := get(t, s, id)
	if !ok {
		t.Fatalf("Get(%q): no live record", id)
	}
	return rec
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s = %v, want %v", what, err, want)
	}
}

// compareRecords compares records as stores keep them: times to the
// tolerance, empty and nil headers alike.
var compareRecords = cmp.Options{
	cmp.Comparer(func(a, b time.Time) bool { return a.Sub(b).Abs() < tolerance }),
	cmp.Comparer(func(a, b http.Header) bool {
		return len(a) == 0 && len(b) == 0 || cmp.Equal(map[string][]string(a), map[string][]string(b))
	}),
	cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) }),
}

func testCreateIfAbsent(t *testing.T, s reference.Store) {
	if _, ok := get(t, s, "id"); ok {
		t.Fatal("a new store has a record")
	}
	first := create(t, s, "id", "fp1", longLease)
	if first.State != reference.Processing || first.Token == "" || first.Key != "key-1" || first.Operation != "orders.create" || first.Fingerprint != "fp1" || first.RawDigest != request("").RawDigest {
		t.Errorf("created record %+v does not hold the request as a processing record with a token", first)
	}
	live, created, err := s.Create(ctx, "id", request("fp2"), longLease)
	if err != nil || created {
		t.Fatalf("second Create = created %v, %v; want the live record", created, err)
	}
	if diff := cmp.Diff(first, live, compareRecords); diff != "" {
		t.Errorf("second Create returned another record (-first +returned):\n%s", diff)
	}
	if diff := cmp.Diff(first, mustGet(t, s, "id"), compareRecords); diff != "" {
		t.Errorf("Get (-created +got):\n%s", diff)
	}
	if other := create(t, s, "other", "fp1", longLease); other.Token == first.Token {
		t.Error("two attempts drew the same token")
	}
}

func testOneWinner(t *testing.T, s reference.Store) {
	const creators = 32
	var (
		wg      sync.WaitGroup
		winners atomic.Int32
		tokens  [creators]string
		errs    [creators]error
	)
	start := make(chan struct{})
	for i := range creators {
		wg.Go(func() {
			<-start
			rec, created, err := s.Create(ctx, "contended", request("fp"+strconv.Itoa(i)), longLease)
			if created {
				winners.Add(1)
			}
			tokens[i], errs[i] = rec.Token, err
		})
	}
	close(start)
	wg.Wait()
	if n := winners.Load(); n != 1 {
		t.Fatalf("%d of %d concurrent creators won, want exactly 1", n, creators)
	}
	for i := range creators {
		if errs[i] != nil || tokens[i] != tokens[0] {
			t.Errorf("creator %d: token %q, %v; want the winner's token %q", i, tokens[i], errs[i], tokens[0])
		}
	}
}

// testStoreClock: the store stamps records with its own time and ignores
// what the caller put in them.
func testStoreClock(t *testing.T, s reference.Store) {
	forged := request("fp")
	forged.State, forged.Token, forged.Error = reference.Completed, "forged-token", "forged"
	forged.CreatedAt = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	forged.UpdatedAt, forged.LeaseUntil, forged.ExpiresAt = forged.CreatedAt, forged.CreatedAt, forged.CreatedAt
	before := time.Now()
	rec, created, err := s.Create(ctx, "id", forged, longLease)
	if err != nil || !created {
		t.Fatalf("Create = created %v, %v", created, err)
	}
	if rec.State != reference.Processing || rec.Token == "forged-token" || rec.Error != "" {
		t.Errorf("Create kept the caller's state, token or error: %+v", rec)
	}
	// The store's clock may differ from ours, but not by a minute on one
	// machine.
	if rec.CreatedAt.Sub(before).Abs() > time.Minute || !rec.UpdatedAt.Equal(rec.CreatedAt) {
		t.Errorf("CreatedAt %v, UpdatedAt %v; want the store's now (ours is %v)", rec.CreatedAt, rec.UpdatedAt, before)
	}
	if got := rec.LeaseUntil.Sub(rec.CreatedAt); (got - longLease).Abs() > tolerance {
		t.Errorf("lease of %v from creation, want %v", got, longLease)
	}
	if !rec.ExpiresAt.IsZero() {
		t.Errorf("a processing record expires at %v; it must live while its lease does", rec.ExpiresAt)
	}
}

func testRenew(t *testing.T, s reference.Store) {
	const lease = 400 * time.Millisecond
	rec := create(t, s, "id", "fp", lease)
	wantErr(t, "Renew with another token", s.Renew(ctx, "id", "not-the-token", lease), reference.ErrLeaseLost)
	wantErr(t, "Renew of an absent record", s.Renew(ctx, "absent", rec.Token, lease), reference.ErrLeaseLost)
	// Renewed every 50ms for three leases, the record holds its key
	// throughout, and its lease moves forward. A machine that stalls this
	// goroutine for most of a lease lets the lease lapse by right: that
	// proves nothing, so the round is run again with a fresh record.
	for stalls := 0; ; stalls++ {
		last, err := renewFor(s, rec.Token, lease)
		if err == nil {
			break
		}
		if since := time.Since(last); !errors.Is(err, reference.ErrLeaseLost) || since < lease*3/4 || stalls == 3 {
			t.Fatalf("Renew %v after the previous renewal: %v", since, err)
		}
		_ = s.Release(ctx, "id", rec.Token)
		rec = create(t, s, "id", "fp", lease)
	}
	if _, created, err := s.Create(ctx, "id", request("fp"), lease); err != nil || created {
		t.Fatalf("Create after renewals = created %v, %v; the renewed lease must hold the key", created, err)
	}
	if got := mustGet(t, s, "id"); got.Token != rec.Token || !got.LeaseUntil.After(rec.LeaseUntil.Add(lease)) {
		t.Errorf("after renewals: token %q, lease until %v; want %q, after %v", got.Token, got.LeaseUntil, rec.Token, rec.LeaseUntil.Add(lease))
	}
	if err := s.Finish(ctx, "id", rec.Token, reference.Completed, reference.Result{}, time.Hour); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Renew of a finished record", s.Renew(ctx, "id", rec.Token, lease), reference.ErrLeaseLost)
}

// renewFor renews the record id every 50ms for three leases, and says
// when it last renewed it and the error of the renewal that failed.
func renewFor(s reference.Store, token string, lease time.Duration) (last time.Time, err error) {
	last = time.Now()
	for end := last.Add(3 * lease); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if err := s.Renew(ctx, "id", token, lease); err != nil {
			return last, err
		}
		last = time.Now()
	}
	return last, nil
}

func testTakeover(t *testing.T, s reference.Store) {
	stale := create(t, s, "id", "fp", shortLease)
	time.Sleep(lapse)
	if rec, ok := get(t, s, "id"); ok {
		t.Fatalf("a processing record is live after its lease lapsed: %+v", rec)
	}
	fresh := create(t, s, "id", "fp", longLease)
	if fresh.Token == stale.Token {
		t.Fatal("the takeover kept the stale token")
	}
	fenced(t, s, "id", stale.Token)
	if got := mustGet(t, s, "id"); got.Token != fresh.Token || got.State != reference.Processing {
		t.Errorf("the stale worker changed the new attempt's record: %+v", got)
	}
}

// fenced checks that token, which lost the record under id, can change
// nothing there.
func fenced(t *testing.T, s reference.Store, id, token string) {
	t.Helper()
	res := reference.Result{Response: reference.Response{Status: 201, Body: []byte("stale")}}
	wantErr(t, "Renew by the stale worker", s.Renew(ctx, id, token, longLease), reference.ErrLeaseLost)
	wantErr(t, "Finish by the stale worker", s.Finish(ctx, id, token, reference.Completed, res, time.Hour), reference.ErrLeaseLost)
	wantErr(t, "Finish (failed) by the stale worker", s.Finish(ctx, id, token, reference.Failed, res, time.Hour), reference.ErrLeaseLost)
	wantErr(t, "Release by the stale worker", s.Release(ctx, id, token), reference.ErrLeaseLost)
}

func testFencedAfterRecreate(t *testing.T, s reference.Store) {
	first := create(t, s, "id", "fp", longLease)
	if err := s.Finish(ctx, "id", first.Token, reference.Completed, reference.Result{Response: reference.Response{Status: 201}}, shortLease); err != nil {
		t.Fatal(err)
	}
	time.Sleep(lapse)
	if _, ok := get(t, s, "id"); ok {
		t.Fatal("a finished record is live after its ttl")
	}
	second := create(t, s, "id", "fp", longLease)
	fenced(t, s, "id", first.Token)
	if got := mustGet(t, s, "id"); got.Token != second.Token || got.State != reference.Processing {
		t.Errorf("the first worker changed the second attempt's record: %+v", got)
	}
}

func testTransitions(t *testing.T, s reference.Store) {
	for _, to := range []reference.State{reference.Completed, reference.Failed} {
		id := "to-" + to.String()
		rec := create(t, s, id, "fp", longLease)
		wantErr(t, "Finish to processing", s.Finish(ctx, id, rec.Token, reference.Processing, reference.Result{}, time.Hour), reference.ErrInvalidTransition)
		res := reference.Result{
			Response: reference.Response{Status: 201, Header: http.Header{"Content-Type": {"application/json"}, "Location": {"/orders/1"}}, Body: []byte(`{"id":1}`)},
		}
		if to == reference.Failed {
			res = reference.Result{Response: reference.Response{Status: 500, Body: []byte("boom")}, Error: "panic: boom"}
		}
		if err := s.Finish(ctx, id, rec.Token, to, res, time.Hour); err != nil {
			t.Fatalf("Finish to %s: %v", to, err)
		}
		got := mustGet(t, s, id)
		want := rec
		want.State, want.Response, want.Error = to, res.Response, res.Error
		want.UpdatedAt, want.LeaseUntil, want.ExpiresAt = got.UpdatedAt, time.Time{}, got.UpdatedAt.Add(time.Hour)
		if diff := cmp.Diff(want, got, compareRecords); diff != "" {
			t.Errorf("record finished %s (-want +got):\n%s", to, diff)
		}
		for _, again := range []reference.State{reference.Processing, reference.Completed, reference.Failed} {
			wantErr(t, fmt.Sprintf("Finish of a %s record to %s", to, again), s.Finish(ctx, id, rec.Token, again, reference.Result{Error: "again"}, time.Hour), reference.ErrInvalidTransition)
		}
		if diff := cmp.Diff(got, mustGet(t, s, id), compareRecords); diff != "" {
			t.Errorf("a refused Finish changed the %s record (-before +after):\n%s", to, diff)
		}
		// An engine on a reference.CreateFirstStore replays what Create
		// answers, without a Get.
		live, created, err := s.Create(ctx, id, request("other-fp"), longLease)
		if err != nil || created {
			t.Errorf("Create over a %s record = created %v, %v; want the live record", to, created, err)
		} else if diff := cmp.Diff(got, live, compareRecords); diff != "" {
			t.Errorf("Create over a %s record answered another record (-Get +Create):\n%s", to, diff)
		}
	}
}

// testTTL: a record created long before it finished still lives ttl
// after it finished, and no longer.
func testTTL(t *testing.T, s reference.Store) {
	const ttl = 300 * time.Millisecond
	rec := create(t, s, "id", "fp", longLease)
	time.Sleep(2 * ttl)
	if err := s.Finish(ctx, "id", rec.Token, reference.Completed, reference.Result{Response: reference.Response{Status: 201}}, ttl); err != nil {
		t.Fatal(err)
	}
	got, ok := get(t, s, "id")
	if !ok {
		t.Fatal("the record expired at completion: ttl must count from then, not from creation")
	}
	if elapsed := got.UpdatedAt.Sub(got.CreatedAt); elapsed < 2*ttl-tolerance {
		t.Errorf("UpdatedAt is %v after CreatedAt, want at least %v: Finish must stamp the store's now", elapsed, 2*ttl)
	}
	if life := got.ExpiresAt.Sub(got.UpdatedAt); (life - ttl).Abs() > tolerance {
		t.Errorf("ExpiresAt is %v after UpdatedAt, want the ttl %v", life, ttl)
	}
	time.Sleep(ttl + lapse)
	if _, ok := get(t, s, "id"); ok {
		t.Error("the record is live after its ttl")
	}
	if fresh := create(t, s, "id", "fp2", longLease); fresh.Token == rec.Token || fresh.Fingerprint != "fp2" {
		t.Errorf("Create after the ttl = %+v; want a new attempt of the new request", fresh)
	}
}

func testRelease(t *testing.T, s reference.Store) {
	rec := create(t, s, "id", "fp", longLease)
	wantErr(t, "Release with another token", s.Release(ctx, "id", "not-the-token"), reference.ErrLeaseLost)
	if err := s.Release(ctx, "id", rec.Token); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if _, ok := get(t, s, "id"); ok {
		t.Fatal("a released record is still live")
	}
	wantErr(t, "second Release", s.Release(ctx, "id", rec.Token), reference.ErrLeaseLost)
	next := create(t, s, "id", "fp", longLease)
	if err := s.Finish(ctx, "id", next.Token, reference.Failed, reference.Result{Response: reference.Response{Status: 500}}, time.Hour); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Release of a failed record", s.Release(ctx, "id", next.Token), reference.ErrInvalidTransition)
	if got := mustGet(t, s, "id"); got.State != reference.Failed {
		t.Errorf("a refused Release changed the record: %+v", got)
	}
}

// testLargeResponse stores a body of DefaultMaxBodyBytes holding every
// byte value, and a long error, exactly.
func testLargeResponse(t *testing.T, s reference.Store) {
	body := make([]byte, reference.DefaultMaxBodyBytes)
	for i := range body {
		body[i] = byte(i * 7)
	}
	res := reference.Result{
		Response: reference.Response{Status: 200, Header: http.Header{"Content-Type": {"application/octet-stream"}, "Content-Language": {"en", "de"}}, Body: body},
		Error:    strings.Repeat("é\x00", 1000),
	}
	rec := create(t, s, "id", "fp", longLease)
	if err := s.Finish(ctx, "id", rec.Token, reference.Failed, res, time.Hour); err != nil {
		t.Fatal(err)
	}
	live, created, err := s.Create(ctx, "id", request("fp"), longLease)
	if err != nil || created {
		t.Fatalf("Create over the failed record = created %v, %v; want the live record", created, err)
	}
	for call, got := range map[string]reference.Record{"Get": mustGet(t, s, "id"), "Create": live} {
		if diff := cmp.Diff(res.Response.Header, got.Response.Header); diff != "" {
			t.Errorf("header %s answered (-want +got):\n%s", call, diff)
		}
		if !bytes.Equal(got.Response.Body, body) || got.Error != res.Error || got.Response.Status != 200 {
			t.Errorf("%s answered another response: status %d, %d body bytes (want %d), error of %d bytes (want %d)", call, got.Response.Status, len(got.Response.Body), len(body), len(got.Error), len(res.Error))
		}
	}
}

// testBinaryIdentities: the engine's identities are length-prefixed byte
// strings; ids that differ after a NUL or in a non-UTF-8 byte are
// different records.
func testBinaryIdentities(t *testing.T, s reference.Store) {
	ids := []string{"\x03abc\x00x", "\x03abc\x00y", "\x03abc", "\xff\xfe", "\xff\xfd"}
	tokens := map[string]string{}
	for _, id := range ids {
		tokens[id] = create(t, s, id, "fp-"+id, longLease).Token
	}
	for _, id := range ids {
		if got := mustGet(t, s, id); got.Token != tokens[id] || got.Fingerprint != "fp-"+id {
			t.Errorf("Get(%q) = %+v, want the record created under it", id, got)
		}
	}
}

// policy is an adapter policy for the engine checks; on_failed,
// wait_timeout_ms and lease_ms are filled in.
const policy = `{
  "spec_version": "idemlint.boundary/v1",
  "boundary": "adapter",
  "service": "orders-adapter",
  "contract_version": "2025-01",
  "operations": [{"operation_key": "orders.create", "method": "POST", "path": "/orders"}],
  "http_idempotency": {
    "header": "x-idempotency-key",
    "role": "owner",
    "require_key": {"methods": ["POST"]},
    "on_missing": {"action": "reject", "status": 400, "error_code": "idempotency_key_required"}
  },
  "idempotency_scope": ["service", "operation_key", "contract_version", "tenant_id", "actor_id", "fingerprint", "idempotency_key"],
  "idempotency_fingerprint": {"canonicalization": "canonical_json", "inputs": ["method", "path", "body"], "algorithm": "sha256"},
  "idempotency_replay": {"on_completed": "stored_response", "same_status": true, "same_body": true, "on_failed": %q},
  "idempotency_inflight": {"policy": "wait", "status": 409, "wait_timeout_ms": %d, "lease_ms": %d},
  "idempotency_conflict": {"on_payload_mismatch": {"status": 422, "error_code": "idempotency_key_reused"}},
  "idempotency_storage": {"tier": "default", "ttl": "24h"},
  "observability": {"log_fields": ["idempotency_key"]}
}`

func newEngine(t *testing.T, s reference.Store, onFailed string) *reference.Engine {
	t.Helper()
	e, err := reference.New("policy.json", fmt.Appendf(nil, policy, onFailed, 10000, 2000), reference.WithStore(s), reference.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// send posts body with key through h and returns the answer.
func send(h http.Handler, key, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(body))
	r.Header.Set("X-Idempotency-Key", key)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// testEngineOnFailed runs the engine on the store: a failing attempt is
// replayed under stored_response and executed again under reexecute.
func testEngineOnFailed(t *testing.T, s reference.Store, onFailed string) {
	var runs atomic.Int64
	h := newEngine(t, s, onFailed).Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := runs.Add(1)
		if n == 1 {
			http.Error(w, "first run fails", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "run %d", n)
	}))
	first := send(h, "k", `{"a":1}`)
	if first.Code != http.StatusServiceUnavailable {
		t.Fatalf("first attempt: %d %s", first.Code, first.Body)
	}
	retry := send(h, "k", `{"a":1}`)
	switch onFailed {
	case "stored_response":
		if retry.Code != first.Code || retry.Body.String() != first.Body.String() || runs.Load() != 1 {
			t.Errorf("retry: %d %q after %d runs; want the stored failure replayed", retry.Code, retry.Body, runs.Load())
		}
	case "reexecute":
		if retry.Code != http.StatusCreated || retry.Body.String() != "run 2" {
			t.Errorf("retry: %d %q; want a second execution", retry.Code, retry.Body)
		}
		if again := send(h, "k", `{"a":1}`); again.Body.String() != "run 2" || runs.Load() != 2 {
			t.Errorf("after the re-execution: %q, %d runs; want its replay", again.Body, runs.Load())
		}
	}
}

// testEngineDuplicates: concurrent duplicates through two engines on the
// store, as two replicas, execute once and all get that answer.
func testEngineDuplicates(t *testing.T, s reference.Store) {
	var runs atomic.Int64
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "run %d", runs.Add(1))
	})
	engines := []*reference.Engine{newEngine(t, s, "stored_response"), newEngine(t, s, "stored_response")}
	replicas := []http.Handler{engines[0].Middleware(slow), engines[1].Middleware(slow)}
	const duplicates = 16
	var (
		wg      sync.WaitGroup
		answers [duplicates]*httptest.ResponseRecorder
	)
	for i := range duplicates {
		wg.Go(func() { answers[i] = send(replicas[i%2], "dup", `{"n":1}`) })
	}
	wg.Wait()
	// A machine that stalls an engine past its 2 s lease lets the lease
	// lapse, and a duplicate runs the key again by right: not a fault of
	// the store's, unless no lapse was counted.
	if lapses := engines[0].LeaseStats().Lapses + engines[1].LeaseStats().Lapses; lapses > 0 {
		t.Skipf("the machine stalled an engine past its lease (%d lapses, %d executions): nothing to conclude", lapses, runs.Load())
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("%d executions of %d duplicates over two engines, want 1, and no lease lapsed", n, duplicates)
	}
	for i, a := range answers {
		if a.Code != http.StatusCreated || a.Body.String() != "run 1" {
			t.Errorf("duplicate %d: %d %q, want 201 \"run 1\"", i, a.Code, a.Body)
		}
	}
}

// testEngineLargeReplay: an answer of DefaultMaxBodyBytes holding every
// byte value, its status and headers, are replayed exactly.
func testEngineLargeReplay(t *testing.T, s reference.Store) {
	body := make([]byte, reference.DefaultMaxBodyBytes)
	for i := range body {
		body[i] = byte(i * 7)
	}
	var runs atomic.Int64
	h := newEngine(t, s, "stored_response").Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusCreated)
		w.Write(body) //nolint:errcheck // a recorder
	}))
	first := send(h, "large", `{"a":1}`)
	retry := send(h, "large", `{"a":1}`)
	for name, w := range map[string]*httptest.ResponseRecorder{"first answer": first, "replay": retry} {
		if w.Code != http.StatusCreated || w.Header().Get("Content-Type") != "application/octet-stream" || !bytes.Equal(w.Body.Bytes(), body) {
			t.Errorf("%s: %d, Content-Type %q, %d body bytes; want 201, application/octet-stream and the %d bytes", name, w.Code, w.Header().Get("Content-Type"), w.Body.Len(), len(body))
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the handler ran %d times, want 1", n)
	}
}
