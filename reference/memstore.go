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
	maxBytes   int64
	sweepEvery time.Duration
	held       atomic.Int64 // records in the maps, live or not yet swept
	heldBytes  atomic.Int64 // their size, as recordSize estimates it
	// tenants is what each tenant holds, when the store bounds their
	// shares (MemoryOptions.TenantPercent); nil otherwise.
	tenants *tenantShares
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
	// MaxBytes caps the bytes held records take (idempotency_storage.
	// max_bytes), as estimated from their identity, key, fingerprint,
	// token, error and stored response: a Create fails with a *FullError
	// while they take it all. Attempts already running still finish and
	// are kept, so the store may exceed it by what they answer. 0 means
	// no cap.
	MaxBytes int64
	// TenantPercent, from 1 to 99, bounds each tenant (Record.Tenant) to
	// that percentage of MaxRecords and of MaxBytes, so that one tenant
	// filling the store cannot refuse every other tenant's new keys; 0 or
	// 100 bounds the store alone. The engine sets it to the policy's
	// max_tenant_percent when the scope holds tenant_id.
	TenantPercent int
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
	s := &MemoryStore{now: o.Clock, seed: maphash.MakeSeed(), maxRecords: int64(o.MaxRecords), maxBytes: o.MaxBytes, sweepEvery: o.SweepEvery}
	if o.TenantPercent > 0 && o.TenantPercent < 100 {
		s.tenants = &tenantShares{
			maxRecords: shareOf(s.maxRecords, o.TenantPercent), maxBytes: shareOf(s.maxBytes, o.TenantPercent),
			use: map[string]*tenantUse{},
		}
	}
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
	var freed int64 // bytes, roughly
	var tenantNext map[string]time.Time
	if s.tenants != nil {
		tenantNext = map[string]time.Time{}
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for id, rec := range sh.records {
			if !rec.Live(now) {
				delete(sh.records, id)
				freed += s.forget(id, &rec)
				continue
			}
			end := rec.end()
			if next.IsZero() || end.Before(next) {
				next = end
			}
			if t, seen := tenantNext[rec.Tenant]; tenantNext != nil && (!seen || end.Before(t)) {
				tenantNext[rec.Tenant] = end
			}
		}
		sh.mu.Unlock()
	}
	s.nextFree.Store(next.UnixNano())
	if s.tenants != nil {
		s.tenants.noteNextFree(tenantNext)
	}
	if freed > 0 && uint64(freed) >= liveHeap()/4 {
		debug.FreeOSMemory()
	}
}

// recordSize estimates the memory a record under id holds. Header maps
// are counted although equal ones are shared (shareHeader): a cap may
// then be reached early, never late.
func recordSize(id string, r *Record) int64 {
	n := int(unsafe.Sizeof(*r)) + len(id) + len(r.Key) + len(r.Fingerprint) + len(r.Token) + len(r.Tenant) + len(r.Error) + len(r.Response.Body)
	for k, vs := range r.Response.Header {
		n += len(k)
		for _, v := range vs {
			n += len(v)
		}
	}
	return int64(n)
}

// forget stops counting the record under id, which the caller removed
// from its shard, and returns its size.
func (s *MemoryStore) forget(id string, r *Record) int64 {
	size := recordSize(id, r)
	s.held.Add(-1)
	s.heldBytes.Add(-size)
	if s.tenants != nil {
		s.tenants.add(r.Tenant, -1, -size)
	}
	return size
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

// HeldBytes returns the bytes the records Held counts take, as estimated
// for MaxBytes.
func (s *MemoryStore) HeldBytes() int64 { return s.heldBytes.Load() }

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
	rec = Record{
		Key: rec.Key, Operation: rec.Operation, Fingerprint: rec.Fingerprint, RawDigest: rec.RawDigest, Tenant: rec.Tenant,
		State: Processing, Token: NewToken(), CreatedAt: now, UpdatedAt: now, LeaseUntil: now.Add(lease),
	}
	if exists { // an expired record the sweep has not removed yet: replaced
		s.forget(id, &old)
	}
	if tenantFull, next, ok := s.reserve(rec.Tenant, recordSize(id, &rec)); !ok {
		if exists {
			delete(sh.records, id)
		}
		return Record{}, false, &FullError{RetryAfter: s.retryAfter(now, next), Tenant: tenantFull}
	}
	sh.records[id] = rec
	return rec, true, nil
}

// reserve counts one more held record of size bytes for tenant, unless
// the store, or the tenant's share of it (tenantFull), is at its cap.
// Refused for the tenant's share, it also returns when the tenant's first
// record stops being live, as the last sweep saw it (Unix nanoseconds; 0
// for the store's).
func (s *MemoryStore) reserve(tenant string, size int64) (tenantFull bool, nextFree int64, ok bool) {
	for {
		n := s.held.Load()
		if s.maxRecords > 0 && n >= s.maxRecords || s.maxBytes > 0 && s.heldBytes.Load() >= s.maxBytes {
			return false, 0, false
		}
		if s.held.CompareAndSwap(n, n+1) {
			break
		}
	}
	s.heldBytes.Add(size)
	if s.tenants != nil {
		if next, ok := s.tenants.reserve(tenant, size); !ok {
			s.held.Add(-1)
			s.heldBytes.Add(-size)
			return true, next, false
		}
	}
	return false, 0, true
}

// retryAfter estimates when a full store has room again: at the first
// sweep after the earliest held record stops being live; or, refused for
// a tenant's share, the earliest of the tenant's records (nextFree, when
// not 0).
func (s *MemoryStore) retryAfter(now time.Time, nextFree int64) time.Duration {
	wait := s.sweepEvery
	if nextFree == 0 {
		nextFree = s.nextFree.Load()
	}
	if nextFree != 0 {
		wait += max(time.Unix(0, nextFree).Sub(now), 0)
	}
	return wait
}

// tenantShares counts what each tenant holds in a MemoryStore.
type tenantShares struct {
	maxRecords, maxBytes int64 // per tenant; 0: no cap
	mu                   sync.Mutex
	use                  map[string]*tenantUse
}

// tenantUse is what one tenant holds.
type tenantUse struct {
	records, bytes int64
	// nextFree is when, as the last sweep saw it, the tenant's first
	// record stops being live (Unix nanoseconds; 0 before any sweep).
	nextFree int64
}

// shareOf is one tenant's share, percent of a cap (0: no cap).
func shareOf(limit int64, percent int) int64 {
	if limit <= 0 {
		return 0
	}
	return max(limit*int64(percent)/100, 1)
}

// reserve counts one more record of size bytes for tenant unless it holds
// its share; refused, it returns the tenant's nextFree.
func (t *tenantShares) reserve(tenant string, size int64) (nextFree int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.use[tenant]
	if u == nil {
		u = &tenantUse{}
		t.use[tenant] = u
	}
	if t.maxRecords > 0 && u.records >= t.maxRecords || t.maxBytes > 0 && u.bytes >= t.maxBytes {
		return u.nextFree, false
	}
	u.records++
	u.bytes += size
	return 0, true
}

// add changes what tenant holds, forgetting a tenant that holds nothing.
func (t *tenantShares) add(tenant string, records, bytes int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.use[tenant]
	if u == nil {
		return
	}
	u.records += records
	u.bytes += bytes
	if u.records <= 0 {
		delete(t.use, tenant)
	}
}

// noteNextFree records when each tenant's first live record ends.
func (t *tenantShares) noteNextFree(next map[string]time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for tenant, u := range t.use {
		u.nextFree = 0
		if end, ok := next[tenant]; ok {
			u.nextFree = end.UnixNano()
		}
	}
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
	before := recordSize(id, &cur)
	cur.State, cur.Response, cur.Error = to, res.Response, res.Error
	cur.Response.Header = s.shareHeader(cur.Response.Header)
	cur.UpdatedAt, cur.LeaseUntil, cur.ExpiresAt = now, time.Time{}, now.Add(ttl)
	sh.records[id] = cur
	// Counted even beyond MaxBytes: the attempt ran, and its record is
	// what keeps it from running twice.
	grown := recordSize(id, &cur) - before
	s.heldBytes.Add(grown)
	if s.tenants != nil {
		s.tenants.add(cur.Tenant, 0, grown)
	}
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
	s.forget(id, &cur)
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
