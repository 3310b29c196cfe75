package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference"
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
		for _, load := range []struct {
			name       string
			duplicates int
		}{{"unique", 1}, {"duplicates8", 8}} {
			b.Run(store.name+"/"+load.name, func(b *testing.B) {
				s := startServe(b, "--policy", servePolicy, "--store", store.url(b))
				loadServe(b, s.base, load.duplicates)
			})
		}
	}
}

// BenchmarkBareDemo is the same load on the demo handler alone, served by
// net/http without the engine: BenchmarkServe's memory figures over this
// one are what the engine (and serve's access log) cost.
func BenchmarkBareDemo(b *testing.B) {
	e, err := reference.Load(servePolicy)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(reference.NewDemo(e.Policy()))
	b.Cleanup(srv.Close)
	for _, load := range []struct {
		name       string
		duplicates int
	}{{"unique", 1}, {"duplicates8", 8}} {
		b.Run(load.name, func(b *testing.B) { loadServe(b, srv.URL, load.duplicates) })
	}
}

// benchWorkers is the number of concurrent clients.
const benchWorkers = 32

func loadServe(b *testing.B, base string, duplicates int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchWorkers}, Timeout: 30 * time.Second}
	body := `{"customerId": "C123", "items": [{"productId": "P001", "qty": 2}], "note": "` + strings.Repeat("x", 900) + `"}`
	prefix := fmt.Sprintf("bench-%d-", time.Now().UnixNano())
	var (
		next      atomic.Int64
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, b.N)
		wg        sync.WaitGroup
	)
	b.ResetTimer()
	cpu0 := processCPU(b)
	start := time.Now()
	for range benchWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				req, _ := http.NewRequest(http.MethodPost, base+"/orders", strings.NewReader(body))
				req.Header.Set("X-Idempotency-Key", prefix+fmt.Sprint(i/duplicates))
				req.Header.Set("X-Tenant-Id", "tenant-a")
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
				d := time.Since(t0)
				mu.Lock()
				latencies = append(latencies, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU(b) - cpu0
	b.StopTimer()
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
	// The CPU time of this process, clients and server together (not a
	// store's server): on a machine shared with other work req/s follows
	// the load, and this moves less.
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(latencies)), "cpu-us/req")
}

// processCPU returns the user and system time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
