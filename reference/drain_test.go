package reference

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// outageStore is a MemoryStore whose Finish, Release and Renew fail while
// down is set, telling of each refusal, and whose next Finish, when
// loseReply is set, is carried out but answered with an error, as when
// the connection breaks before the reply arrives.
type outageStore struct {
	*MemoryStore
	down      atomic.Bool
	loseReply atomic.Bool
	refused   chan struct{}
}

var errConnReset = errors.New("connection reset by peer")

func newOutageStore() *outageStore {
	return &outageStore{MemoryStore: NewMemoryStore(MemoryOptions{}), refused: make(chan struct{}, 100)}
}

func (s *outageStore) refuse() error {
	select {
	case s.refused <- struct{}{}:
	default:
	}
	return errConnReset
}

func (s *outageStore) Renew(ctx context.Context, id, token string, lease time.Duration) error {
	if s.down.Load() {
		return s.refuse()
	}
	return s.MemoryStore.Renew(ctx, id, token, lease)
}

func (s *outageStore) Finish(ctx context.Context, id, token string, to State, res Result, ttl time.Duration) error {
	if s.down.Load() {
		return s.refuse()
	}
	err := s.MemoryStore.Finish(ctx, id, token, to, res, ttl)
	if err == nil && s.loseReply.CompareAndSwap(true, false) {
		return errConnReset
	}
	return err
}

func (s *outageStore) Release(ctx context.Context, id, token string) error {
	if s.down.Load() {
		return s.refuse()
	}
	return s.MemoryStore.Release(ctx, id, token)
}

// longLease keeps the tests' attempts from lapsing.
var longLease = map[string]any{"/idempotency_inflight/lease_ms": 600000}

// TestDrainWaitsForEndWrites: the store is down when the handler
// finishes, so the end of the attempt is retried in the background; Drain
// returns only once it is recorded, and a duplicate then replays it.
func TestDrainWaitsForEndWrites(t *testing.T) {
	store := newOutageStore()
	e := newEngine(t, longLease, WithStore(store))
	a := &app{}
	store.down.Store(true)
	first := do(e.Middleware(a), call{key: "k", body: `{}`})
	if first.Code != http.StatusCreated {
		t.Fatalf("first: %d %s, want the handler's 201 although the store is down", first.Code, first.Body)
	}
	<-store.refused // the first write of the end; a retry follows
	drained := make(chan error, 1)
	go func() { drained <- e.Drain(context.Background()) }()
	<-store.refused // a retry, while Drain waits
	store.down.Store(false)
	if err := <-drained; err != nil {
		t.Fatalf("Drain = %v once the store is back, want nil", err)
	}
	if rec, ok, _ := store.Get(context.Background(), e.identity(&e.ops[0], call{}.request().Header, "k")); !ok || rec.State != Completed {
		t.Fatalf("when Drain returned the record was %v (found %v), want completed", rec.State, ok)
	}
	if dup := do(e.Middleware(a), call{key: "k", body: `{}`}); dup.Code != http.StatusCreated || dup.Body.String() != first.Body.String() || a.runs.Load() != 1 {
		t.Errorf("duplicate: %d %s, %d runs; want the first answer replayed", dup.Code, dup.Body, a.runs.Load())
	}
}

// TestDrainNamesUnrecordedAttempts: when the store stays down until
// Drain's context ends, Drain names the attempts it could not record.
func TestDrainNamesUnrecordedAttempts(t *testing.T) {
	store := newOutageStore()
	e := newEngine(t, longLease, WithStore(store))
	store.down.Store(true)
	for _, key := range []string{"k2", "k1"} {
		do(e.Middleware(&app{}), call{key: key, body: `{}`})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := e.Drain(ctx)
	var unrecorded *UnrecordedError
	if !errors.As(err, &unrecorded) {
		t.Fatalf("Drain = %v, want an *UnrecordedError", err)
	}
	want := []Unrecorded{{"orders.create", "k1"}, {"orders.create", "k2"}}
	if diff := cmp.Diff(want, unrecorded.Attempts); diff != "" {
		t.Errorf("unrecorded attempts (-want +got):\n%s", diff)
	}
	if msg := err.Error(); !strings.Contains(msg, `orders.create "k1"; orders.create "k2"`) {
		t.Errorf("message %q does not name the keys", msg)
	}
}

// TestDrainAfterLostReply: a Finish carried out whose reply was lost is
// retried; the retry finds the record finished by this very attempt, which
// is the end recorded, not an error.
func TestDrainAfterLostReply(t *testing.T) {
	store := newOutageStore()
	var logs bytes.Buffer
	e := newEngine(t, longLease, WithStore(store), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	store.loseReply.Store(true)
	do(e.Middleware(&app{}), call{key: "k", body: `{}`})
	if err := e.Drain(context.Background()); err != nil {
		t.Fatalf("Drain = %v, want nil: the first Finish was recorded", err)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a lost reply logged an error although the record is fine:\n%s", logs.String())
	}
}

// TestShutdownReleasesCutAttempt: a handler cut by shutdown answers 503;
// that is not stored as a failure, the key is released, and a retry on
// another engine executes.
func TestShutdownReleasesCutAttempt(t *testing.T) {
	store := NewMemoryStore(MemoryOptions{})
	base, shutdown := context.WithCancelCause(context.Background())
	one := newEngine(t, nil, WithStore(store), WithBaseContext(base))
	a := &app{started: make(chan struct{}, 1)}
	a.serve = func(w http.ResponseWriter, r *http.Request, run int64) {
		if run == 1 {
			<-r.Context().Done()
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}
	done := make(chan int)
	go func() { done <- do(one.Middleware(a), call{key: "k", body: `{}`}).Code }()
	<-a.started
	shutdown(errors.New("shutting down"))
	if code := <-done; code != http.StatusServiceUnavailable {
		t.Errorf("cut request: %d, want the handler's 503", code)
	}
	if err := one.Drain(context.Background()); err != nil {
		t.Errorf("Drain = %v, want nil: the release was recorded", err)
	}
	a.started = nil
	two := newEngine(t, nil, WithStore(store))
	if w := do(two.Middleware(a), call{key: "k", body: `{}`}); w.Code != http.StatusCreated || a.runs.Load() != 2 {
		t.Errorf("retry after the cut: %d %s, %d runs; want a second execution, not the cut 503 replayed", w.Code, w.Body, a.runs.Load())
	}
}

// TestLeaseLapseCancelsHandler: the store stops answering while the
// handler runs; once the lease lapsed unrenewed, the handler's context
// ends with ErrLeaseLapsed. The handler sees its attempt token. The
// store's clock stands still, so that no renewal delayed by a busy
// machine finds the lease lapsed on the store's side instead.
func TestLeaseLapseCancelsHandler(t *testing.T) {
	store := newOutageStore()
	store.MemoryStore = NewMemoryStore(MemoryOptions{Clock: newFakeClock().Now})
	e := newEngine(t, map[string]any{"/idempotency_inflight/lease_ms": 30}, WithStore(store))
	var cause error
	var token string
	var recToken string
	a := &app{}
	a.serve = func(w http.ResponseWriter, r *http.Request, run int64) {
		token, _ = AttemptToken(r.Context())
		rec, _, _ := store.MemoryStore.Get(r.Context(), e.identity(&e.ops[0], r.Header, "k"))
		recToken = rec.Token
		store.down.Store(true)
		<-r.Context().Done()
		cause = context.Cause(r.Context())
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	do(e.Middleware(a), call{key: "k", body: `{}`})
	if !errors.Is(cause, ErrLeaseLapsed) || !errors.Is(cause, ErrLeaseLost) || !errors.Is(cause, errConnReset) {
		t.Errorf("handler context ended with %v, want ErrLeaseLapsed wrapping the store's error", cause)
	}
	if token == "" || token != recToken {
		t.Errorf("AttemptToken = %q, want the record's token %q", token, recToken)
	}
	if _, ok := AttemptToken(context.Background()); ok {
		t.Error("AttemptToken found a token outside a handler")
	}
}

// TestLapsedAttemptThatFailsIsReleased: the store is back just after the
// engine gave the lease up (on its side the lease still holds: its clock
// stands still); the handler, cut, answers 503, which is released, not
// stored as a failure, and a duplicate executes.
func TestLapsedAttemptThatFailsIsReleased(t *testing.T) {
	store := newOutageStore()
	store.MemoryStore = NewMemoryStore(MemoryOptions{Clock: newFakeClock().Now})
	e := newEngine(t, map[string]any{"/idempotency_inflight/lease_ms": 30}, WithStore(store))
	a := &app{}
	a.serve = func(w http.ResponseWriter, r *http.Request, run int64) {
		if run == 1 {
			store.down.Store(true)
			<-r.Context().Done()
			store.down.Store(false)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}
	do(e.Middleware(a), call{key: "k", body: `{}`})
	if err := e.Drain(context.Background()); err != nil {
		t.Fatalf("Drain = %v, want the release recorded", err)
	}
	if w := do(e.Middleware(a), call{key: "k", body: `{}`}); w.Code != http.StatusCreated || a.runs.Load() != 2 {
		t.Errorf("duplicate after the lapse: %d, %d runs; want a second execution, not the cut 503 replayed", w.Code, a.runs.Load())
	}
}

// deadlineStore is a MemoryStore whose Renew reports how long each call
// was given and fails it, as a store that is down.
type deadlineStore struct {
	*MemoryStore
	given chan time.Duration
}

func (s deadlineStore) Renew(ctx context.Context, _, _ string, _ time.Duration) error {
	deadline, _ := ctx.Deadline()
	select {
	case s.given <- time.Until(deadline):
	default:
	}
	return errConnReset
}

// TestFailedRenewalsAreShortAndRetried: a renewal may take a tenth of
// the lease, not a third, so that a store that hangs cannot hold the next
// try back until the lease lapsed; a failed one is tried again.
func TestFailedRenewalsAreShortAndRetried(t *testing.T) {
	const lease = 3 * time.Second
	store := deadlineStore{NewMemoryStore(MemoryOptions{}), make(chan time.Duration, 1)}
	e := newEngine(t, map[string]any{"/idempotency_inflight/lease_ms": lease.Milliseconds()}, WithStore(store))
	a := &app{release: make(chan struct{})}
	done := make(chan struct{})
	go func() { defer close(done); do(e.Middleware(a), call{key: "k", body: `{}`}) }()
	for try := range 2 {
		if given := <-store.given; given <= 0 || given > lease/10 {
			t.Errorf("renewal %d was given %v, want at most a tenth of the %v lease", try+1, given, lease)
		}
	}
	close(a.release)
	<-done
}
