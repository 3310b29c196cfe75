package reference

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"time"
)

// MemoryStore is the in-process Store the engine uses unless given another.
// Records live in a fixed number of shards, each a map behind its own
// mutex, so requests for different keys rarely contend.
//
// Expired records are removed lazily, without a background goroutine to
// stop: Get, Create, Finish and Delete drop the one they look at, and a
// Create sweeps its whole shard when a minute has passed since the shard's
// previous sweep. A record thus outlives its expiry by at most a minute
// once its shard sees traffic, at an amortised cost of one visit per
// record per minute.
type MemoryStore struct {
	now    func() time.Time
	seed   maphash.Seed
	shards [memShards]memShard
}

const (
	memShards  = 64
	sweepEvery = time.Minute
)

type memShard struct {
	mu        sync.Mutex
	records   map[string]Record
	nextSweep time.Time
}

// NewMemoryStore returns an empty store that reads the time from now (nil
// means time.Now) to decide which records have expired.
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	s := &MemoryStore{now: now, seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].records = make(map[string]Record)
	}
	return s
}

func (s *MemoryStore) shard(id string) *memShard {
	return &s.shards[maphash.String(s.seed, id)%memShards]
}

// live returns the live record under id, deleting it when it has expired.
// The caller holds sh.mu.
func (sh *memShard) live(id string, now time.Time) (Record, bool) {
	rec, ok := sh.records[id]
	if ok && !rec.Live(now) {
		delete(sh.records, id)
		return Record{}, false
	}
	return rec, ok
}

// Create implements Store.
func (s *MemoryStore) Create(_ context.Context, id string, rec Record) (Record, bool, error) {
	if rec.State != Processing {
		return Record{}, false, fmt.Errorf("%w: a record is created in processing, not %s", ErrInvalidTransition, rec.State)
	}
	sh := s.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := s.now()
	if cur, ok := sh.live(id, now); ok {
		return cur, false, nil
	}
	sh.records[id] = rec
	if !now.Before(sh.nextSweep) {
		sh.sweep(now)
	}
	return rec, true, nil
}

// sweep deletes every expired record of the shard. The caller holds sh.mu.
func (sh *memShard) sweep(now time.Time) {
	for id, rec := range sh.records {
		if !rec.Live(now) {
			delete(sh.records, id)
		}
	}
	sh.nextSweep = now.Add(sweepEvery)
}

// Finish implements Store.
func (s *MemoryStore) Finish(_ context.Context, id, fingerprint string, to State, res Result) error {
	sh := s.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	cur, ok := sh.live(id, s.now())
	if !ok || cur.Fingerprint != fingerprint {
		return ErrNotFound
	}
	if !cur.State.CanBecome(to) {
		return fmt.Errorf("%w: %s -> %s", ErrInvalidTransition, cur.State, to)
	}
	cur.State = to
	cur.Response = res.Response
	cur.Error = res.Error
	cur.UpdatedAt = res.At
	sh.records[id] = cur
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

// Delete implements Store.
func (s *MemoryStore) Delete(_ context.Context, id string) error {
	sh := s.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	cur, ok := sh.live(id, s.now())
	if !ok {
		return nil
	}
	if cur.State != Failed {
		return fmt.Errorf("%w: only a failed record can be deleted, this one is %s", ErrInvalidTransition, cur.State)
	}
	delete(sh.records, id)
	return nil
}
