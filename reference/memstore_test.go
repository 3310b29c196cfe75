package reference

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

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

// processing is a fresh record as the engine creates it.
func processing(clock *fakeClock, fp string) Record {
	now := clock.Now()
	return Record{Key: "k", Operation: "orders.create", Fingerprint: fp, State: Processing, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}
}

func mustCreate(t *testing.T, s Store, id string, rec Record) {
	t.Helper()
	if _, created, err := s.Create(context.Background(), id, rec); err != nil || !created {
		t.Fatalf("Create(%s) = created %v, %v", id, created, err)
	}
}

func mustGet(t *testing.T, s Store, id string) Record {
	t.Helper()
	rec, ok, err := s.Get(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("Get(%s) = ok %v, %v", id, ok, err)
	}
	return rec
}

// TestStoreTransitions drives every (state, target) pair through Finish:
// only processing -> completed and processing -> failed succeed, and a
// refused transition leaves the record as it was.
func TestStoreTransitions(t *testing.T) {
	ctx := context.Background()
	first := Result{Response: Response{Status: 201, Body: []byte("first")}, At: time.Unix(1, 0)}
	second := Result{Response: Response{Status: 500, Body: []byte("second")}, Error: "boom", At: time.Unix(2, 0)}
	for _, from := range []State{Processing, Completed, Failed} {
		for _, to := range allStates {
			t.Run(fmt.Sprintf("%s->%s", from, to), func(t *testing.T) {
				clock := newFakeClock()
				s := NewMemoryStore(clock.Now)
				mustCreate(t, s, "id", processing(clock, "fp"))
				if from != Processing {
					if err := s.Finish(ctx, "id", "fp", from, first); err != nil {
						t.Fatal(err)
					}
				}
				before := mustGet(t, s, "id")

				err := s.Finish(ctx, "id", "fp", to, second)

				after := mustGet(t, s, "id")
				if from.CanBecome(to) {
					if err != nil {
						t.Fatalf("Finish = %v, want success", err)
					}
					want := before
					want.State, want.Response, want.Error, want.UpdatedAt = to, second.Response, second.Error, second.At
					if diff := cmp.Diff(want, after); diff != "" {
						t.Errorf("record after Finish (-want +got):\n%s", diff)
					}
					return
				}
				if !errors.Is(err, ErrInvalidTransition) {
					t.Fatalf("Finish = %v, want ErrInvalidTransition", err)
				}
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("refused Finish changed the record (-before +after):\n%s", diff)
				}
			})
		}
	}
}

func TestStoreCreateIfAbsent(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	s := NewMemoryStore(clock.Now)
	first := processing(clock, "fp1")
	mustCreate(t, s, "id", first)

	live, created, err := s.Create(ctx, "id", processing(clock, "fp2"))
	if err != nil || created {
		t.Fatalf("second Create = created %v, %v; want the live record", created, err)
	}
	if diff := cmp.Diff(first, live); diff != "" {
		t.Errorf("second Create returned (-want +got):\n%s", diff)
	}
	if got := mustGet(t, s, "id"); got.Fingerprint != "fp1" {
		t.Errorf("second Create replaced the live record: fingerprint %s", got.Fingerprint)
	}
	if _, _, err := s.Create(ctx, "other", Record{State: Completed}); !errors.Is(err, ErrInvalidTransition) {
		t.Errorf("Create of a completed record = %v, want ErrInvalidTransition", err)
	}
}

func TestStoreFinishIsFenced(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	s := NewMemoryStore(clock.Now)
	mustCreate(t, s, "id", processing(clock, "fp"))
	if err := s.Finish(ctx, "id", "another", Completed, Result{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Finish with another fingerprint = %v, want ErrNotFound", err)
	}
	if err := s.Finish(ctx, "absent", "fp", Completed, Result{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Finish of an absent record = %v, want ErrNotFound", err)
	}
	if got := mustGet(t, s, "id"); got.State != Processing {
		t.Errorf("state = %s after refused Finish calls, want processing", got.State)
	}
}

func TestStoreDeleteOnlyFailed(t *testing.T) {
	ctx := context.Background()
	for _, state := range []State{Processing, Completed, Failed} {
		t.Run(state.String(), func(t *testing.T) {
			clock := newFakeClock()
			s := NewMemoryStore(clock.Now)
			mustCreate(t, s, "id", processing(clock, "fp"))
			if state != Processing {
				if err := s.Finish(ctx, "id", "fp", state, Result{}); err != nil {
					t.Fatal(err)
				}
			}
			err := s.Delete(ctx, "id")
			_, ok, _ := s.Get(ctx, "id")
			if state == Failed {
				if err != nil || ok {
					t.Errorf("Delete of a failed record = %v, record still there: %v", err, ok)
				}
				return
			}
			if !errors.Is(err, ErrInvalidTransition) || !ok {
				t.Errorf("Delete of a %s record = %v, record still there: %v; want ErrInvalidTransition and the record kept", state, err, ok)
			}
		})
	}
	s := NewMemoryStore(nil)
	if err := s.Delete(ctx, "absent"); err != nil {
		t.Errorf("Delete of an absent record = %v, want nil", err)
	}
}

func TestStoreExpiry(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	s := NewMemoryStore(clock.Now)
	rec := processing(clock, "fp") // expires in an hour
	mustCreate(t, s, "id", rec)

	clock.Advance(time.Hour - time.Nanosecond)
	if _, ok, _ := s.Get(ctx, "id"); !ok {
		t.Fatal("record gone before its expiry")
	}
	clock.Advance(time.Nanosecond)
	if _, ok, _ := s.Get(ctx, "id"); ok {
		t.Error("Get returned a record at its expiry")
	}
	if err := s.Finish(ctx, "id", "fp", Completed, Result{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Finish of an expired record = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "id"); err != nil {
		t.Errorf("Delete of an expired record = %v, want nil", err)
	}

	// An expired record is replaced by Create, even one that is still
	// physically there.
	mustCreate(t, s, "id2", processing(clock, "old"))
	clock.Advance(time.Hour)
	fresh := processing(clock, "new")
	live, created, err := s.Create(ctx, "id2", fresh)
	if err != nil || !created || live.Fingerprint != "new" {
		t.Errorf("Create over an expired record = %+v, created %v, %v; want the new record", live, created, err)
	}
}

// TestStoreSweep shows that expired records do not pile up: once
// sweepEvery has passed, creating records elsewhere removes them.
func TestStoreSweep(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	s := NewMemoryStore(clock.Now)
	const old, fresh = 20000, 2000
	for i := range old {
		mustCreate(t, s, "old"+strconv.Itoa(i), processing(clock, "fp"))
	}
	clock.Advance(time.Hour + sweepEvery)
	for i := range fresh {
		mustCreate(t, s, "new"+strconv.Itoa(i), processing(clock, "fp"))
	}
	held := 0
	for i := range s.shards {
		held += len(s.shards[i].records)
	}
	// Every shard received creates after the pause (2000 random ids over
	// 64 shards), so every one was swept.
	if held != fresh {
		t.Errorf("store holds %d records, want the %d live ones", held, fresh)
	}
	if _, ok, _ := s.Get(ctx, "old0"); ok {
		t.Error("an expired record is still visible")
	}
}

// TestStoreKeepsResult checks that Finish stores the attempt's response as
// given.
func TestStoreKeepsResult(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	s := NewMemoryStore(clock.Now)
	mustCreate(t, s, "id", processing(clock, "fp"))
	res := Result{Response: Response{Status: 201, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("body")}, At: clock.Now()}
	if err := s.Finish(ctx, "id", "fp", Completed, res); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res.Response, mustGet(t, s, "id").Response); diff != "" {
		t.Errorf("stored response (-want +got):\n%s", diff)
	}
}
