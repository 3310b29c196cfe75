package reference

import (
	"context"
	"fmt"
	"hash/maphash"
	"maps"
	"net/http"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
	"weak"
)

// MemoryStore is the in-process Store the engine uses unless given another.
// Records live in a fixed number of shards, each a map behind its own
// mutex, so requests for different keys rarely contend.
//
// A background sweep removes expired records and lapsed leases every
// SweepEvery, traffic or not. It needs no Close: it holds the store weakly
// and ends once the store is garbage. A sweep that freed at least a
// quarter of the live heap collects it and returns it to the operating
// system there and then: without traffic the runtime would collect it
// only at its periodic collection, up to two minutes later, and give it
// back later still.
type MemoryStore struct {
	now        func() time.Time
	seed       maphash.Seed
	maxRecords int64
	sweepEvery time.Duration
	held       atomic.Int64 // records in the maps, live or not yet swept
	// nextFree is when, as the last sweep saw it, the first held record
	// stops being live (Unix nanoseconds; 0 before any sweep).
	nextFree atomic.Int64
	// lastHeader is the response header Finish stored last. Responses of
	// one operation mostly carry the same header, and a map each costs
	// about as much as a small record's other fields together, so equal
	// headers share one map (stored headers are never modified).
	lastHeader atomic.Pointer[http.Header]
	shards     [memShards]memShard
}

// MemoryOptions configures a MemoryStore; the zero value is usable.
type MemoryOptions struct {
	// Clock reads the store's time; nil means time.Now.
	Clock func() time.Time
	// MaxRecords caps the records held at once (idempotency_storage.
	// max_records); a Create beyond it fails with a *FullError until a
	// sweep frees room. 0 means no cap.
	MaxRecords int
	// SweepEvery is how often expired records are removed;
	// 0 means DefaultSweepEvery.
	SweepEvery time.Duration
}

// DefaultSweepEvery keeps an expired record in memory for at most this
// long, at the cost of one visit per held record per sweep.
const DefaultSweepEvery = 15 * time.Second

const memShards = 64

type memShard struct {
	mu      sync.Mutex
	records map[string]Record
}

// NewMemoryStore returns an empty store.
func NewMemoryStore(o MemoryOptions) *MemoryStore {
	s := &MemoryStore{now: o.Clock, seed: maphash.MakeSeed(), maxRecords: int64(o.MaxRecords), sweepEvery: o.SweepEvery}
	if s.now == nil {
		s.now = time.Now
	}
	if s.sweepEvery <= 0 {
		s.sweepEvery = DefaultSweepEvery
	}
	for i := range s.shards {
		s.shards[i].records = make(map[string]Record)
	}
	go sweepLoop(weak.Make(s), s.sweepEvery)
	return s
}

// sweepLoop sweeps the store every interval for as long as it is
// reachable from elsewhere.
func sweepLoop(store weak.Pointer[MemoryStore], every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for range tick.C {
		s := store.Value()
		if s == nil {
			return
		}
		s.sweep()
	}
}

// sweep removes every record that is no longer live and notes when the
// first remaining one will stop being live.
func (s *MemoryStore) sweep() {
	now := s.now()
	var next time.Time
	var freed uint64 // bytes, roughly
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for id, rec := range sh.records {
			if !rec.Live(now) {
				delete(sh.records, id)
				s.held.Add(-1)
				freed += recordSize(id, &rec)
				continue
			}
			if end := rec.end(); next.IsZero() || end.Before(next) {
				next = end
			}
		}
		sh.mu.Unlock()
	}
	s.nextFree.Store(next.UnixNano())
	if freed > 0 && freed >= liveHeap()/4 {
		debug.FreeOSMemory()
	}
}

// recordSize estimates the memory a record under id holds.
func recordSize(id string, r *Record) uint64 {
	return uint64(unsafe.Sizeof(*r)) + uint64(len(id)+len(r.Key)+len(r.Fingerprint)+len(r.Token)+len(r.Error)+len(r.Response.Body))
}

// liveHeap returns the heap the last collection found live.
func liveHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// end is when the record stops being live unless renewed.
func (r *Record) end() time.Time {
	if r.State == Processing {
		return r.LeaseUntil
	}
	return r.ExpiresAt
}

// Held returns how many records the store holds, including expired ones
// the next sweep removes.
func (s *MemoryStore) Held() int { return int(s.held.Load()) }

func (s *MemoryStore) shard(id string) *memShard {
	return &s.shards[maphash.String(s.seed, id)%memShards]
}

// live returns the live record under id. The caller holds sh.mu.
func (sh *memShard) live(id string, now time.Time) (Record, bool) {
	rec, ok := sh.records[id]
	if ok && !rec.Live(now) {
		return Record{}, false
	}
	return rec, ok
}

// Create implements Store.
func (s *MemoryStore) Create(_ context.Context, id string, rec Record, lease time.Duration) (Record, bool, error) {
	sh := s.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := s.now()
	old, exists := sh.records[id]
	if exists && old.Live(now) {
		return old, false, nil
	}
	if !exists && !s.reserve() {
		return Record{}, false, &FullError{RetryAfter: s.retryAfter(now)}
	}
	rec = Record{
		Key: rec.Key, Operation: rec.Operation, Fingerprint: rec.Fingerprint, RawDigest: rec.RawDigest,
		State: Processing, Token: NewToken(), CreatedAt: now, UpdatedAt: now, LeaseUntil: now.Add(lease),
	}
	sh.records[id] = rec
	return rec, true, nil
}

// reserve counts one more held record unless the store is at its cap.
func (s *MemoryStore) reserve() bool {
	for {
		n := s.held.Load()
		if s.maxRecords > 0 && n >= s.maxRecords {
			return false
		}
		if s.held.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// retryAfter estimates when a full store has room again: at the first
// sweep after the earliest held record stops being live.
func (s *MemoryStore) retryAfter(now time.Time) time.Duration {
	wait := s.sweepEvery
	if next := s.nextFree.Load(); next != 0 {
		wait += max(time.Unix(0, next).Sub(now), 0)
	}
	return wait
}

// holding returns the live record under id that token holds. The
// caller holds sh.mu.
func (sh *memShard) holding(id, token string, now time.Time) (Record, error) {
	cur, ok := sh.live(id, now)
	if !ok || cur.Token != token {
		return Record{}, ErrLeaseLost
	}
	return cur, nil
}

// Renew implements Store.
func (s *MemoryStore) Renew(_ context.Context, id, token string, lease time.Duration) error {
	sh := s.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := s.now()
	cur, err := sh.holding(id, token, now)
	if err != nil {
		return err
	}
	if cur.State != Processing {
		return fmt.Errorf("%w: the attempt already ended (%s)", ErrLeaseLost, cur.State)
	}
	cur.LeaseUntil = now.Add(lease)
	sh.records[id] = cur
	return nil
}

// Finish implements Store.
func (s *MemoryStore) Finish(_ context.Context, id, token string, to State, res Result, ttl time.Duration) error {
	sh := s.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := s.now()
	cur, err := sh.holding(id, token, now)
	if err != nil {
		return err
	}
	if !cur.State.CanBecome(to) {
		return fmt.Errorf("%w: %s -> %s", ErrInvalidTransition, cur.State, to)
	}
	cur.State, cur.Response, cur.Error = to, res.Response, res.Error
	cur.Response.Header = s.shareHeader(cur.Response.Header)
	cur.UpdatedAt, cur.LeaseUntil, cur.ExpiresAt = now, time.Time{}, now.Add(ttl)
	sh.records[id] = cur
	return nil
}

// shareHeader returns a stored map equal to h when there is one, else h.
func (s *MemoryStore) shareHeader(h http.Header) http.Header {
	if len(h) == 0 {
		return h
	}
	if last := s.lastHeader.Load(); last != nil && maps.EqualFunc(*last, h, slices.Equal) {
		return *last
	}
	stored := h // only now on the heap: &h would put h there on every call
	s.lastHeader.Store(&stored)
	return h
}

// Release implements Store.
func (s *MemoryStore) Release(_ context.Context, id, token string) error {
	sh := s.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	cur, err := sh.holding(id, token, s.now())
	if err != nil {
		return err
	}
	if cur.State != Processing {
		return fmt.Errorf("%w: only a processing record can be released, this one is %s", ErrInvalidTransition, cur.State)
	}
	delete(sh.records, id)
	s.held.Add(-1)
	return nil
}

// Get implements Store.
func (s *MemoryStore) Get(_ context.Context, id string) (Record, bool, error) {
	sh := s.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	rec, ok := sh.live(id, s.now())
	return rec, ok, nil
}
