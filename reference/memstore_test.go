package reference

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"
	"weak"
)

// The Store contract itself is checked by storetest, on every store;
// these tests cover what only the memory store has: a movable clock, the
// background sweep and the record cap.

var allStates = []State{0, Processing, Completed, Failed, 99}

func TestCanBecome(t *testing.T) {
	allowed := map[[2]State]bool{
		{Processing, Completed}: true,
		{Processing, Failed}:    true,
	}
	for _, from := range allStates {
		for _, to := range allStates {
			if got := from.CanBecome(to); got != allowed[[2]State{from, to}] {
				t.Errorf("%s.CanBecome(%s) = %v", from, to, got)
			}
		}
	}
}

func mustCreate(t *testing.T, s Store, id string, lease time.Duration) Record {
	t.Helper()
	rec, created, err := s.Create(context.Background(), id, Record{Key: "k", Fingerprint: "fp"}, lease)
	if err != nil || !created {
		t.Fatalf("Create(%s) = created %v, %v", id, created, err)
	}
	return rec
}

// TestMemoryStoreClock: leases and ttl follow the injected clock to the
// nanosecond.
func TestMemoryStoreClock(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	s := NewMemoryStore(MemoryOptions{Clock: clock.Now})
	rec := mustCreate(t, s, "id", time.Minute)
	clock.Advance(time.Minute - time.Nanosecond)
	if _, ok, _ := s.Get(ctx, "id"); !ok {
		t.Fatal("record gone before its lease lapsed")
	}
	if err := s.Finish(ctx, "id", rec.Token, Completed, Result{}, time.Hour); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour - time.Nanosecond)
	if _, ok, _ := s.Get(ctx, "id"); !ok {
		t.Fatal("record gone before its ttl, counted from completion, ran out")
	}
	clock.Advance(time.Nanosecond)
	if _, ok, _ := s.Get(ctx, "id"); ok {
		t.Error("record live at its expiry")
	}
}

// TestMemoryStoreSweep: expired records and lapsed leases leave memory
// at the next sweep without any request.
func TestMemoryStoreSweep(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	s := NewMemoryStore(MemoryOptions{Clock: clock.Now, SweepEvery: time.Hour})
	const finished, abandoned, live = 3000, 2000, 500
	for i := range finished {
		rec := mustCreate(t, s, "finished"+strconv.Itoa(i), time.Minute)
		if err := s.Finish(ctx, "finished"+strconv.Itoa(i), rec.Token, Completed, Result{}, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	for i := range abandoned {
		mustCreate(t, s, "abandoned"+strconv.Itoa(i), time.Minute)
	}
	clock.Advance(time.Minute)
	for i := range live {
		mustCreate(t, s, "live"+strconv.Itoa(i), time.Minute)
	}
	if got := s.Held(); got != finished+abandoned+live {
		t.Fatalf("held %d before the sweep, want %d", got, finished+abandoned+live)
	}
	s.sweep()
	if got := s.Held(); got != live {
		t.Errorf("held %d after the sweep, want the %d live records", got, live)
	}
	n := 0
	for i := range s.shards {
		n += len(s.shards[i].records)
	}
	if n != live {
		t.Errorf("the maps hold %d records, want %d", n, live)
	}
}

// TestMemoryStoreSweepCollects: a sweep that freed much of the heap
// collects it there and then, with no allocation to start a collection.
func TestMemoryStoreSweepCollects(t *testing.T) {
	clock := newFakeClock()
	s := NewMemoryStore(MemoryOptions{Clock: clock.Now, SweepEvery: time.Hour})
	body := finishWithBody(t, s, 64<<20)
	clock.Advance(time.Minute)
	s.sweep()
	if body.Value() != nil {
		t.Error("the expired record's body is still on the heap after the sweep")
	}
}

// finishWithBody stores a completed record, expiring in a minute, whose
// response body is size bytes, and returns a weak pointer to the body.
func finishWithBody(t *testing.T, s *MemoryStore, size int) weak.Pointer[byte] {
	t.Helper()
	rec := mustCreate(t, s, "big", time.Minute)
	body := make([]byte, size)
	if err := s.Finish(context.Background(), "big", rec.Token, Completed, Result{Response: Response{Status: 201, Body: body}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	return weak.Make(&body[0])
}

// TestMemoryStoreSweepsInBackground uses real time: a short sweep
// interval removes expired records with no traffic at all.
func TestMemoryStoreSweepsInBackground(t *testing.T) {
	s := NewMemoryStore(MemoryOptions{SweepEvery: 10 * time.Millisecond})
	for i := range 100 {
		mustCreate(t, s, strconv.Itoa(i), time.Millisecond)
	}
	eventually(t, "the sweep frees the lapsed records", func() bool { return s.Held() == 0 })
}

func TestMemoryStoreCap(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	s := NewMemoryStore(MemoryOptions{Clock: clock.Now, MaxRecords: 3, SweepEvery: time.Hour})
	recs := make([]Record, 3)
	for i := range recs {
		recs[i] = mustCreate(t, s, strconv.Itoa(i), time.Minute)
	}
	_, _, err := s.Create(ctx, "over", Record{}, time.Minute)
	var full *FullError
	if !errors.As(err, &full) || !errors.Is(err, ErrFull) || full.RetryAfter < time.Hour {
		t.Fatalf("Create beyond the cap = %v; want a *FullError that waits for the next sweep", err)
	}
	// Existing identities are still answered; a lapsed one is taken over
	// in place, without a new slot.
	if live, created, err := s.Create(ctx, "0", Record{}, time.Minute); err != nil || created || live.Token != recs[0].Token {
		t.Errorf("Create of a held identity at the cap = %v, %v", created, err)
	}
	clock.Advance(time.Minute)
	if _, created, err := s.Create(ctx, "1", Record{}, time.Minute); err != nil || !created {
		t.Errorf("takeover of a lapsed identity at the cap = %v, %v", created, err)
	}
	// Releasing frees a slot at once; sweeping frees the lapsed ones.
	if err := s.Release(ctx, "1", mustGetToken(t, s, "1")); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "new", time.Minute)
	s.sweep()
	for i := range 2 {
		mustCreate(t, s, fmt.Sprint("after-sweep", i), time.Minute)
	}
	if _, _, err := s.Create(ctx, "over", Record{}, time.Minute); !errors.Is(err, ErrFull) {
		t.Errorf("Create beyond the cap after the sweep = %v, want ErrFull", err)
	}
}

func mustGetToken(t *testing.T, s Store, id string) string {
	t.Helper()
	rec, ok, err := s.Get(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("Get(%s) = %v, %v", id, ok, err)
	}
	return rec.Token
}

// TestMemoryStoreSharesEqualHeaders: equal stored headers are one map,
// and a different one is kept as given.
func TestMemoryStoreSharesEqualHeaders(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(MemoryOptions{})
	finish := func(id string, h http.Header) http.Header {
		t.Helper()
		rec := mustCreate(t, s, id, time.Minute)
		if err := s.Finish(ctx, id, rec.Token, Completed, Result{Response: Response{Status: 201, Header: h}}, time.Hour); err != nil {
			t.Fatal(err)
		}
		got, _, _ := s.Get(ctx, id)
		return got.Response.Header
	}
	a := finish("a", http.Header{"Content-Type": {"application/json"}})
	b := finish("b", http.Header{"Content-Type": {"application/json"}})
	c := finish("c", http.Header{"Content-Type": {"text/plain"}})
	if reflect.ValueOf(a).UnsafePointer() != reflect.ValueOf(b).UnsafePointer() {
		t.Error("two equal headers are stored as two maps")
	}
	if c.Get("Content-Type") != "text/plain" || a.Get("Content-Type") != "application/json" {
		t.Errorf("headers changed: %v, %v", a, c)
	}
}

// TestMemoryStoreCountsBytes: the bytes and each tenant's share are
// counted as records are created, finished, replaced, released and swept,
// and come back to nothing.
func TestMemoryStoreCountsBytes(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	s := NewMemoryStore(MemoryOptions{Clock: clock.Now, MaxBytes: 1 << 20, TenantPercent: 25})
	create := func(id, tenant string) Record {
		t.Helper()
		rec, created, err := s.Create(ctx, id, Record{Key: "k", Fingerprint: "fp", Tenant: tenant}, time.Minute)
		if err != nil || !created {
			t.Fatalf("Create(%s) = created %v, %v", id, created, err)
		}
		return rec
	}
	a := create("a", "t1")
	b := create("b", "t2")
	if err := s.Finish(ctx, "a", a.Token, Completed, Result{Response: Response{Status: 201, Header: http.Header{"Content-Type": {"application/json"}}, Body: make([]byte, 1000)}}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if held := s.HeldBytes(); held < 1000 {
		t.Errorf("%d bytes held after a 1000-byte answer was stored", held)
	}
	if err := s.Release(ctx, "b", b.Token); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Hour) // a expires, unswept; a new attempt replaces it
	c := create("a", "t1")
	if err := s.Finish(ctx, "a", c.Token, Failed, Result{Error: "boom"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Hour)
	s.sweep()
	if s.Held() != 0 || s.HeldBytes() != 0 || len(s.tenants.use) != 0 {
		t.Errorf("after every record went: %d records, %d bytes, %d tenants counted", s.Held(), s.HeldBytes(), len(s.tenants.use))
	}
}
