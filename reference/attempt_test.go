package reference

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestClientGoneDoesNotFailTheAttempt: the handler's context survives the
// client's, so the attempt completes and retries replay its answer.
func TestClientGoneDoesNotFailTheAttempt(t *testing.T) {
	e := newEngine(t, nil)
	a := &app{started: make(chan struct{}, 1), release: make(chan struct{})}
	var handlerCtxErr atomic.Pointer[error]
	a.serve = func(w http.ResponseWriter, r *http.Request, run int64) {
		err := r.Context().Err()
		handlerCtxErr.Store(&err)
		w.WriteHeader(http.StatusCreated)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := call{key: "k", body: `{}`}.request().WithContext(ctx)
		e.Middleware(a).ServeHTTP(discard{}, r)
	}()
	<-a.started
	cancel() // the client times out while the handler runs
	close(a.release)
	<-done
	if err := *handlerCtxErr.Load(); err != nil {
		t.Errorf("the handler saw its context end with the client's: %v", err)
	}
	if w := do(e.Middleware(a), call{key: "k", body: `{}`}); w.Code != http.StatusCreated || a.runs.Load() != 1 {
		t.Errorf("retry after the client left: %d, %d runs; want the stored 201", w.Code, a.runs.Load())
	}
}

// discard is a ResponseWriter for a client that is gone.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}

// TestBaseContextEndsHandlers: at shutdown the handlers' contexts end.
func TestBaseContextEndsHandlers(t *testing.T) {
	base, shutdown := context.WithCancelCause(context.Background())
	e := newEngine(t, nil, WithBaseContext(base))
	errShutdown := errors.New("shutting down")
	a := &app{started: make(chan struct{}, 1)}
	a.serve = func(w http.ResponseWriter, r *http.Request, run int64) {
		<-r.Context().Done()
		if cause := context.Cause(r.Context()); cause != errShutdown {
			t.Errorf("handler context ended with %v, want the base context's cause", cause)
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	done := make(chan struct{})
	go func() { defer close(done); do(e.Middleware(a), call{key: "k", body: `{}`}) }()
	<-a.started
	shutdown(errShutdown)
	<-done
}

// TestGoexitReleasesTheKey: a handler that exits its goroutine without
// returning leaves no processing record behind; the next duplicate runs.
func TestGoexitReleasesTheKey(t *testing.T) {
	e := newEngine(t, map[string]any{"/idempotency_inflight": map[string]any{"policy": "reject", "status": 409}})
	a := &app{}
	a.serve = func(w http.ResponseWriter, r *http.Request, run int64) {
		if run == 1 {
			runtime.Goexit()
		}
		w.WriteHeader(http.StatusCreated)
	}
	done := make(chan struct{})
	go func() { defer close(done); do(e.Middleware(a), call{key: "k", body: `{}`}) }()
	<-done
	if w := do(e.Middleware(a), call{key: "k", body: `{}`}); w.Code != http.StatusCreated || a.runs.Load() != 2 {
		t.Errorf("duplicate after runtime.Goexit: %d, %d runs; want a second execution", w.Code, a.runs.Load())
	}
}

// TestLeaseRenewedWhileHandlerRuns: while a handler runs, the engine renews
// its lease, so a duplicate on another replica is refused long after the
// first lease would have lapsed. The store's clock moves only when the
// test moves it, a third of a lease after each renewal, so no scheduling
// delay can let the lease lapse.
func TestLeaseRenewedWhileHandlerRuns(t *testing.T) {
	const lease = 60 * time.Millisecond
	clock := newFakeClock()
	store := renewals{NewMemoryStore(MemoryOptions{Clock: clock.Now}), make(chan struct{}, 1)}
	reject := map[string]any{"/idempotency_inflight": map[string]any{"policy": "reject", "status": 409, "lease_ms": lease.Milliseconds()}}
	one, two := newEngine(t, reject, WithStore(store)), newEngine(t, reject, WithStore(store))
	a := &app{started: make(chan struct{}, 1), release: make(chan struct{})}
	first := make(chan int)
	go func() { first <- do(one.Middleware(a), call{key: "k", body: `{}`}).Code }()
	<-a.started
	other := &app{} // the second replica's handler, which must not run
	for range 6 {   // two leases in all: without renewals the first lapses
		select { // a renewal told before the last move of the clock
		case <-store.renewed:
		default:
		}
		<-store.renewed
		clock.Advance(lease / 3)
		if w := do(two.Middleware(other), call{key: "k", body: `{}`}); w.Code != http.StatusConflict {
			t.Errorf("duplicate while the first attempt runs: %d %s, want 409", w.Code, w.Body)
		}
	}
	close(a.release)
	if code := <-first; code != http.StatusCreated || a.runs.Load() != 1 || other.runs.Load() != 0 {
		t.Errorf("first: %d; %d runs, %d on the other replica; want one execution", code, a.runs.Load(), other.runs.Load())
	}
}

// renewals is a MemoryStore that tells of each lease it renewed.
type renewals struct {
	*MemoryStore
	renewed chan struct{}
}

func (s renewals) Renew(ctx context.Context, id, token string, lease time.Duration) error {
	err := s.MemoryStore.Renew(ctx, id, token, lease)
	if err == nil {
		select {
		case s.renewed <- struct{}{}:
		default:
		}
	}
	return err
}

// TestLapsedLeaseIsTakenOver: a record whose worker died (it holds a
// lease nobody renews) is executed by the next duplicate once the lease
// lapsed.
func TestLapsedLeaseIsTakenOver(t *testing.T) {
	clock := newFakeClock()
	e := newEngine(t, nil, WithClock(clock.Now))
	a := &app{}
	header := http.Header{"X-Idempotency-Key": {"k"}, "X-Tenant-Id": {"tenant-a"}}
	id := e.identity(&e.ops[0], header, "k")
	fp, err := e.fp.fingerprint(&Request{Method: "POST", Path: "/orders", Header: header, Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, created, err := e.store.Create(context.Background(), id, Record{Fingerprint: fp}, e.lease); err != nil || !created {
		t.Fatalf("the dead worker's Create: %v, %v", created, err)
	}
	clock.Advance(e.lease)
	if w := do(e.Middleware(a), call{key: "k", body: `{}`}); w.Code != http.StatusCreated || a.runs.Load() != 1 {
		t.Errorf("duplicate after the lease lapsed: %d %s; want it executed", w.Code, w.Body)
	}
}

// flakyStore fails Finish a number of times, and may report every Renew
// as a lost lease.
type flakyStore struct {
	*MemoryStore
	finishFailures atomic.Int32
	leaseLost      bool
}

func (s *flakyStore) Finish(ctx context.Context, id, token string, to State, res Result, ttl time.Duration) error {
	if s.finishFailures.Add(-1) >= 0 {
		return errStoreDown
	}
	return s.MemoryStore.Finish(ctx, id, token, to, res, ttl)
}

func (s *flakyStore) Renew(ctx context.Context, id, token string, lease time.Duration) error {
	if s.leaseLost {
		return ErrLeaseLost
	}
	return s.MemoryStore.Renew(ctx, id, token, lease)
}

// TestFinishRetried: a store that fails to record the end is retried
// while the lease lasts; the client gets its answer at once.
func TestFinishRetried(t *testing.T) {
	store := &flakyStore{MemoryStore: NewMemoryStore(MemoryOptions{})}
	store.finishFailures.Store(3)
	e := newEngine(t, nil, WithStore(store))
	a := &app{}
	if w := do(e.Middleware(a), call{key: "k", body: `{}`}); w.Code != http.StatusCreated {
		t.Fatalf("first: %d %s", w.Code, w.Body)
	}
	eventually(t, "the attempt is recorded", func() bool {
		rec, ok, _ := store.Get(context.Background(), e.identity(&e.ops[0], call{key: "k"}.request().Header, "k"))
		return ok && rec.State == Completed
	})
	if w := do(e.Middleware(a), call{key: "k", body: `{}`}); w.Code != http.StatusCreated || a.runs.Load() != 1 {
		t.Errorf("duplicate: %d, %d runs; want a replay", w.Code, a.runs.Load())
	}
}

// TestLostLeaseCancelsHandler: once another attempt owns the key, the
// stale handler's context ends with ErrLeaseLost.
func TestLostLeaseCancelsHandler(t *testing.T) {
	store := &flakyStore{MemoryStore: NewMemoryStore(MemoryOptions{}), leaseLost: true}
	e := newEngine(t, map[string]any{"/idempotency_inflight/lease_ms": 30}, WithStore(store))
	a := &app{}
	var cause atomic.Value
	a.serve = func(w http.ResponseWriter, r *http.Request, run int64) {
		<-r.Context().Done()
		cause.Store(context.Cause(r.Context()))
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	do(e.Middleware(a), call{key: "k", body: `{}`})
	if got, _ := cause.Load().(error); !errors.Is(got, ErrLeaseLost) {
		t.Errorf("handler context ended with %v, want ErrLeaseLost", got)
	}
}

// TestStoreFull: at max_records a new identity is answered 503 with
// Retry-After, and never executed.
func TestStoreFull(t *testing.T) {
	e := newEngine(t, map[string]any{"/idempotency_storage/max_records": 2})
	a := &app{}
	for _, tenant := range []string{"a", "b"} {
		if w := do(e.Middleware(a), call{key: "k", body: `{}`, header: http.Header{"X-Tenant-Id": {tenant}}}); w.Code != http.StatusCreated {
			t.Fatalf("tenant %s: %d", tenant, w.Code)
		}
	}
	w := do(e.Middleware(a), call{key: "k", body: `{}`, header: http.Header{"X-Tenant-Id": {"c"}}})
	wantProblem(t, w, http.StatusServiceUnavailable, CodeStoreFull)
	if !strings.Contains(w.Body.String(), "the idempotency store is full") {
		t.Errorf("the refusal does not say the store is full: %s", w.Body)
	}
	if got := w.Header().Get("Retry-After"); got != "15" || a.runs.Load() != 2 {
		t.Errorf("Retry-After %q after %d runs; want 15 (the next sweep) and no execution", got, a.runs.Load())
	}
	if w := do(e.Middleware(a), call{key: "k", body: `{}`, header: http.Header{"X-Tenant-Id": {"a"}}}); w.Code != http.StatusCreated || w.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("a held key at the cap: %d; want its replay", w.Code)
	}
}

// TestStoreFullByBytes: at max_bytes a new identity is answered 503 with
// Retry-After however few records there are; an attempt already running
// is still recorded.
func TestStoreFullByBytes(t *testing.T) {
	big := `{"note":"` + strings.Repeat("x", 4000) + `"}`
	e := newEngine(t, map[string]any{"/idempotency_storage/max_bytes": 10000})
	a := &app{}
	for i, want := range []int{http.StatusCreated, http.StatusCreated, http.StatusCreated, http.StatusServiceUnavailable} {
		key := "k" + strconv.Itoa(i)
		w := do(e.Middleware(a), call{key: key, body: big, header: http.Header{"X-Tenant-Id": {key}}})
		if w.Code != want {
			t.Fatalf("%s: %d, want %d", key, w.Code, want)
		}
		if want == http.StatusServiceUnavailable {
			wantProblem(t, w, http.StatusServiceUnavailable, CodeStoreFull)
			if got := w.Header().Get("Retry-After"); got != "15" {
				t.Errorf("Retry-After %q, want 15 (the next sweep)", got)
			}
		}
	}
	if a.runs.Load() != 3 {
		t.Errorf("%d runs, want the 3 that fit", a.runs.Load())
	}
	if held := e.store.(*MemoryStore).HeldBytes(); held < 10000 || held > 10000+6000 {
		t.Errorf("%d bytes held, want the cap overshot by at most the last answer", held)
	}
}

// TestTenantShare: one tenant holds at most max_tenant_percent (default
// 25) of max_records; beyond it only that tenant's new keys are refused,
// with the time its own first record frees as Retry-After.
func TestTenantShare(t *testing.T) {
	for _, c := range []struct {
		percent any // nil: not declared
		share   int // of max_records 8
	}{{nil, 2}, {25, 2}, {50, 4}} {
		t.Run(fmt.Sprint("max_tenant_percent=", c.percent), func(t *testing.T) {
			clock := newFakeClock()
			storage := map[string]any{"/idempotency_storage/max_records": 8, "/idempotency_storage/ttl": "24h"}
			if c.percent != nil {
				storage["/idempotency_storage/max_tenant_percent"] = c.percent
			}
			e := newEngine(t, storage, WithClock(clock.Now))
			a := &app{}
			greedy := http.Header{"X-Tenant-Id": {"greedy"}}
			for i := range c.share {
				if w := do(e.Middleware(a), call{key: "k" + strconv.Itoa(i), body: `{}`, header: greedy}); w.Code != http.StatusCreated {
					t.Fatalf("the greedy tenant's key %d: %d", i, w.Code)
				}
			}
			next := "k" + strconv.Itoa(c.share)
			e.store.(*MemoryStore).sweep() // notes when the greedy tenant's records end
			w := do(e.Middleware(a), call{key: next, body: `{}`, header: greedy})
			wantProblem(t, w, http.StatusServiceUnavailable, CodeStoreFull)
			if !strings.Contains(w.Body.String(), "this tenant holds its share") {
				t.Errorf("the refusal does not say the tenant's share is taken: %s", w.Body)
			}
			if got := w.Header().Get("Retry-After"); got != strconv.Itoa(86400+15) {
				t.Errorf("Retry-After %q, want %d (its first record's ttl, then the sweep)", got, 86400+15)
			}
			for _, tenant := range []string{"other", ""} {
				if w := do(e.Middleware(a), call{key: next, body: `{}`, header: http.Header{"X-Tenant-Id": {tenant}}}); w.Code != http.StatusCreated {
					t.Errorf("tenant %q while the greedy one is at its share: %d", tenant, w.Code)
				}
			}
			if want := int64(c.share + 2); a.runs.Load() != want {
				t.Errorf("%d runs, want %d", a.runs.Load(), want)
			}
			// Once the greedy tenant's records expire and are swept, it has room.
			clock.Advance(24 * time.Hour)
			e.store.(*MemoryStore).sweep()
			if w := do(e.Middleware(a), call{key: next, body: `{}`, header: greedy}); w.Code != http.StatusCreated {
				t.Errorf("the greedy tenant after its records expired: %d", w.Code)
			}
		})
	}
}

// TestTenantShareOff: with max_tenant_percent 100 one tenant may fill
// the whole store, as a deployment with a single tenant needs; the store's
// own cap still holds.
func TestTenantShareOff(t *testing.T) {
	e := newEngine(t, map[string]any{"/idempotency_storage/max_records": 8, "/idempotency_storage/max_tenant_percent": 100})
	a := &app{}
	only := http.Header{"X-Tenant-Id": {"only"}}
	for i := range 8 {
		if w := do(e.Middleware(a), call{key: "k" + strconv.Itoa(i), body: `{}`, header: only}); w.Code != http.StatusCreated {
			t.Fatalf("the only tenant's key %d of 8: %d", i, w.Code)
		}
	}
	w := do(e.Middleware(a), call{key: "k8", body: `{}`, header: only})
	wantProblem(t, w, http.StatusServiceUnavailable, CodeStoreFull)
	if strings.Contains(w.Body.String(), "this tenant holds its share") {
		t.Errorf("refused for a tenant's share that is turned off: %s", w.Body)
	}
	if a.runs.Load() != 8 {
		t.Errorf("%d runs, want 8", a.runs.Load())
	}
}

// TestLeaseStats: a duplicate that executes after the attempt it waited
// for lapsed counts a takeover, and the stalled attempt, finding its
// record held by another, counts a lapse: the one way, crashes aside,
// that a key runs twice, and what tests with short leases tell from a
// double execution without one.
func TestLeaseStats(t *testing.T) {
	clock := newFakeClock()
	store := NewMemoryStore(MemoryOptions{Clock: clock.Now})
	// A lease far longer than the test, so that only the clock ends it:
	// no renewal runs meanwhile.
	edits := map[string]any{"/idempotency_inflight/lease_ms": 3600000, "/idempotency_inflight/wait_timeout_ms": 60000}
	stalled, other := newEngine(t, edits, WithStore(store)), newEngine(t, edits, WithStore(store))
	a := &app{started: make(chan struct{}, 2), release: make(chan struct{})}
	first := make(chan *httptest.ResponseRecorder)
	go func() { first <- do(stalled.Middleware(a), call{key: "k", body: `{}`}) }()
	<-a.started
	second := make(chan *httptest.ResponseRecorder)
	go func() { second <- do(other.Middleware(a), call{key: "k", body: `{}`}) }()
	eventually(t, "the duplicate waits", func() bool { return other.waitingTotal() == 1 })
	clock.Advance(2 * time.Hour)
	<-a.started // the duplicate executes: the key runs twice
	close(a.release)
	<-first
	<-second
	if got, want := stalled.LeaseStats(), (LeaseStats{Lapses: 1}); got != want {
		t.Errorf("the stalled engine: %+v, want %+v", got, want)
	}
	if got, want := other.LeaseStats(), (LeaseStats{Takeovers: 1}); got != want {
		t.Errorf("the engine that took over: %+v, want %+v", got, want)
	}
}
