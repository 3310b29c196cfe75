package storetest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference"
)

// Load is what the failover and migration tests of the stores send: like
// the runs that found keys executed twice, on a smaller scale. Each new key is sent twice at
// once to two engines (replicas of serve, each its own store and
// client); an answer of 503 (the store unavailable, or a replica not
// acknowledging) is retried until it is answered. Once the disruption
// is over every key is sent once more, to a third engine.
const (
	loadWorkers = 32
	loadHandler = 20 * time.Millisecond // the business handler's time
	// loadLease is the default lease_ms, long beside a failover (2-3 s)
	// and the time a promoted master takes to have a replica in sync
	// again, so that no lease lapses while the store is away: a lapse
	// would let a key run twice by right, which is not what these tests
	// look for.
	loadLease = 30 * time.Second
	// loadDeadline bounds the retries of one request.
	loadDeadline = 45 * time.Second
)

// LoadResult is what a Load saw.
type LoadResult struct {
	Keys    int
	Doubles []string // keys that executed more than once
	Refused int      // answers of 503, retried
	Lapses  int64    // the engines' LeaseStats
}

// Load sends new keys through engines on stores from open (three
// engines, each on a store of its own) for duration, while disrupt runs
// from disruptAfter into the load; disrupt returns once the store serves
// again. Then it sends every key once more.
func Load(t *testing.T, open func() reference.Store, duration, disruptAfter time.Duration, disrupt func()) LoadResult {
	t.Helper()
	src := fmt.Appendf(nil, policy, "stored_response", loadDeadline.Milliseconds(), loadLease.Milliseconds())
	engines := make([]*reference.Engine, 3)
	for i := range engines {
		var err error
		if engines[i], err = reference.New("policy.json", src, reference.WithStore(open()), reference.WithLogger(quiet)); err != nil {
			t.Fatal(err)
		}
	}
	var (
		runsMu  sync.Mutex
		runs    = map[string]int{}
		refused atomic.Int64
		failed  atomic.Value // the first request answered neither 201 nor 503
	)
	// giveUp ends every retry: a store that never comes back fails the
	// test in bounded time.
	giveUp := time.Now().Add(duration + 2*loadDeadline)
	send := func(e *reference.Engine, key string) {
		req := &reference.Request{Method: http.MethodPost, Path: "/orders", Header: http.Header{"X-Idempotency-Key": {key}, "X-Tenant-Id": {"tenant-a"}}, Body: []byte(`{}`)}
		handler := func(context.Context) (reference.Response, error) {
			runsMu.Lock()
			runs[key]++
			runsMu.Unlock()
			time.Sleep(loadHandler)
			return reference.Response{Status: http.StatusCreated, Body: []byte(key)}, nil
		}
		deadline := time.Now().Add(loadDeadline)
		if giveUp.Before(deadline) {
			deadline = giveUp
		}
		for ; ; time.Sleep(100 * time.Millisecond) {
			r := e.Handle(context.Background(), req, handler)
			switch {
			case r.Status == http.StatusCreated:
				return
			case r.Status != http.StatusServiceUnavailable || time.Now().After(deadline):
				failed.CompareAndSwap(nil, key+": "+strconv.Itoa(r.Status)+" "+string(r.Body))
				return
			}
			refused.Add(1)
		}
	}
	var (
		next    atomic.Int64
		workers sync.WaitGroup
		stop    = time.Now().Add(duration)
	)
	for range loadWorkers {
		workers.Go(func() {
			for time.Now().Before(stop) {
				i := int(next.Add(1))
				key := "load-" + strconv.Itoa(i)
				var pair sync.WaitGroup
				for j := range 2 {
					pair.Go(func() { send(engines[(i+j)%len(engines)], key) })
				}
				pair.Wait()
			}
		})
	}
	time.Sleep(disruptAfter)
	disrupt()
	workers.Wait()
	keys := int(next.Load())
	var later sync.WaitGroup
	sem := make(chan struct{}, loadWorkers)
	for i := 1; i <= keys; i++ {
		sem <- struct{}{}
		later.Go(func() {
			defer func() { <-sem }()
			send(engines[(i+2)%len(engines)], "load-"+strconv.Itoa(i))
		})
	}
	later.Wait()
	for _, e := range engines {
		if err := e.Drain(context.Background()); err != nil {
			t.Errorf("drain: %v", err)
		}
	}
	if f := failed.Load(); f != nil {
		t.Errorf("a request was answered neither 201 nor 503 in %v: %s", loadDeadline, f)
	}
	res := LoadResult{Keys: keys, Refused: int(refused.Load())}
	for key, n := range runs {
		if n > 1 {
			res.Doubles = append(res.Doubles, key)
		}
	}
	if len(runs) != keys {
		t.Errorf("%d of %d keys executed", len(runs), keys)
	}
	for _, e := range engines {
		res.Lapses += e.LeaseStats().Lapses
	}
	return res
}
