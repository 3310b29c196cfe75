package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/server"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// BenchmarkServe measures "idemlint serve" over loopback HTTP, client and
// server in this process, for each store: requests per second and the
// 99th percentile latency, on unique keys and on duplicate-heavy load
// (each key sent 8 times at once). Run it with a fixed count, e.g.
// -benchtime 20000x; the Redis and PostgreSQL cases need their servers
// (see reference/storetest/testserver).
func BenchmarkServe(b *testing.B) {
	stores := []struct {
		name string
		url  func(b *testing.B) string
	}{
		{"memory", func(*testing.B) string { return "memory" }},
		{"redis", func(b *testing.B) string { return testserver.StartRedis(b).DatabaseURL(b) }},
		{"postgres", func(b *testing.B) string { return testserver.StartPostgres(b).DatabaseURL(b) }},
	}
	for _, store := range stores {
		for _, load := range benchLoads {
			b.Run(store.name+"/"+load.name, func(b *testing.B) {
				s := startServe(b, "--policy", benchPolicy(b), "--store", store.url(b))
				load.runAll2xx(b, s.base)
			})
		}
	}
}

// BenchmarkBareDemo is the same load on the demo handler alone, served by
// net/http without the engine: BenchmarkServe's memory figures over this
// one are what the engine (and serve's access log) cost.
//
//	go test -run '^$' -bench 'Serve/memory/unique|BareDemo/unique' -benchtime 20000x ./cmd/idemlint
//
// At load average 1.5-2, 5 runs alternating with the previous main: serve
// 1.29-1.35x the demo alone in req/s (median 1.32) and 1.30-1.34x in CPU
// per request, 69-72 us against 52-56, at the goal's edge of 1.3x (at load
// average 4-9, 1.16-1.27x: load slows the demo alone more). About 12 us
// were the engine's: admitting (fingerprint, lookup, create) 6, the access
// line 3, written then one system call per request (before
// server.LogBuffer); nothing measurable on duplicates.
func BenchmarkBareDemo(b *testing.B) {
	e, err := reference.Load(servePolicy)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(reference.NewDemo(e.Policy()))
	b.Cleanup(srv.Close)
	// Under the collector's setting serve runs the memory store with, so
	// that the two differ by the engine alone.
	b.Cleanup(server.CollectForMemoryStore())
	for _, load := range benchLoads {
		b.Run(load.name, func(b *testing.B) { load.runAll2xx(b, srv.URL) })
	}
}

// benchLoad is one load of the serve benchmarks: b.N requests POST /orders
// with 1 KB JSON bodies from benchWorkers concurrent clients, each key
// sent duplicates times in a row, so mostly at once.
type benchLoad struct {
	name       string
	duplicates int
}

// benchLoads are unique keys and duplicate-heavy load.
var benchLoads = []benchLoad{{"unique", 1}, {"duplicates8", 8}}

// benchWorkers is the number of concurrent clients.
const benchWorkers = 32

// loadTimeLimit bounds one load: past it the requests in flight are
// cancelled and the benchmark fails.
const loadTimeLimit = 5 * time.Minute

// loadResult is what run measured.
type loadResult struct {
	perSecond float64 // answers
	non2xx    int
}

// orderBody is the 1 KB order the loads send.
var orderBody = `{"customerId": "C123", "items": [{"productId": "P001", "qty": 2}], "note": "` + strings.Repeat("x", 900) + `"}`

// newOrder returns the load's POST /orders to base with key.
func newOrder(ctx context.Context, base, key string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/orders", strings.NewReader(orderBody)) // a valid URL
	req.Header.Set("X-Idempotency-Key", key)
	req.Header.Set("X-Tenant-Id", "tenant-a")
	return req
}

// newLoadClient returns the HTTP client of benchWorkers clients.
func newLoadClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchWorkers}, Timeout: 30 * time.Second}
}

// run sends the load to the server at base and reports requests per
// second, the median and 99th percentile latency of all answers, and how
// many answers were not 2xx. A request that gets no answer fails the
// benchmark.
func (l benchLoad) run(b *testing.B, base string) loadResult {
	client := newLoadClient()
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeLimit)
	defer cancel()
	prefix := fmt.Sprintf("bench-%d-", time.Now().UnixNano())
	var (
		next      atomic.Int64
		mu        sync.Mutex // guards latencies, non2xx and failure
		latencies = make([]time.Duration, 0, b.N)
		non2xx    int
		failure   error
		wg        sync.WaitGroup
	)
	b.ResetTimer()
	cpu0 := selfCPU(b)
	start := time.Now()
	for range benchWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t0 := time.Now()
				resp, err := client.Do(newOrder(ctx, base, prefix+fmt.Sprint(i/l.duplicates)))
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					// The first failure is the cause; it stops the others.
					if failure == nil {
						failure = fmt.Errorf("request %d: %w", i, err)
						cancel()
					}
					mu.Unlock()
					return
				}
				latencies = append(latencies, d)
				if resp.StatusCode/100 != 2 {
					non2xx++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := selfCPU(b) - cpu0
	b.StopTimer()
	if failure != nil {
		b.Fatalf("after %d answers in %v (the load stops after %v): %v", len(latencies), elapsed, loadTimeLimit, failure)
	}
	slices.Sort(latencies)
	perSecond := float64(len(latencies)) / elapsed.Seconds()
	b.ReportMetric(perSecond, "req/s")
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(non2xx), "non2xx")
	// The CPU time of this process, clients and server together (not a
	// store's server): on a machine shared with other work req/s follows
	// the load, and this moves less.
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(latencies)), "cpu-us/req")
	return loadResult{perSecond, non2xx}
}

// runAll2xx runs the load on a server that must answer every request 2xx.
func (l benchLoad) runAll2xx(b *testing.B, base string) {
	if n := l.run(b, base).non2xx; n > 0 {
		b.Fatalf("%d of %d answers were not 2xx: the figures are those of refusals", n, b.N)
	}
}

// runUnique2xx runs the load on the server name at base, which must
// answer 2xx to every unique key (duplicates sent at once may be refused
// as in progress, as the peers do).
func (l benchLoad) runUnique2xx(b *testing.B, name, base string) loadResult {
	r := l.run(b, base)
	if l.duplicates == 1 && r.non2xx > 0 {
		b.Fatalf("%s answered %d of %d unique keys other than 2xx: the figures are those of refusals", name, r.non2xx, b.N)
	}
	return r
}

// benchMaxBytes is the max_bytes of benchPolicy: a tenant's share, a
// quarter, holds a round's records (about 1.6 KB each, 1.125 per request
// of a round's two loads) up to some 150,000 requests.
const benchMaxBytes = 1 << 30

// benchPolicy writes servePolicy with max_bytes benchMaxBytes and returns
// its path. Under servePolicy's default 128 MiB the one tenant of the
// loads holds a quarter, about 20,000 records, and serve on the memory
// store would answer 503 to the rest; max_bytes, unlike
// max_tenant_percent, is known to the builds a baseline may be.
func benchPolicy(b *testing.B) string {
	src, err := os.ReadFile(servePolicy)
	if err != nil {
		b.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(src, &doc); err != nil {
		b.Fatal(err)
	}
	doc["idempotency_storage"].(map[string]any)["max_bytes"] = benchMaxBytes
	out, err := json.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "adapter.json")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// selfCPU returns the user and system time this process has used, to the
// microsecond (processCPU reads another process's, to the tick).
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
