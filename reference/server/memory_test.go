package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Figures of TestServeMemoryAtMaxRecords.
const (
	memoryLoadKeys       = 1_000_000
	memoryLoadMaxRecords = 100_000
	memoryLoadTTL        = time.Minute // the policy's ttl "1m"
	// memoryLoadDeadline bounds the load; the wait for expiry comes on top.
	memoryLoadDeadline = 10 * time.Minute
)

// TestServeMemoryAtMaxRecords measures a server process (Run with serve's
// defaults) on the memory store at max_records 100,000 and ttl 1m: 1,000,000 unique keys with 1 KB
// bodies from 32 clients, then no traffic. It prints how the requests
// were answered, the server's peak RSS, live heap and heap goal (from
// GODEBUG=gctrace=1); then, a minute after the last record expired, its
// RSS and the live heap of its last collection; and the CPU it used. It
// is a measurement of minutes, so it runs only when asked:
//
//	IDEMLINT_MEMORY_LOAD=1 go test -run TestServeMemoryAtMaxRecords -v -timeout 20m ./reference/server
//
// Where the memory goes: in a heap profile of 100,000 records (173 MB)
// the stored response bodies are 69% (the demo echoes the order, and a
// replay needs it byte for byte), the records and their map slots 16%,
// fingerprints, identities and tokens 7%, the demo's last 10,000 orders
// 6%; stored headers are shared. Go's collector lets the heap grow to
// 1 + GOGC/100 times the live heap, so at the default the peak sat at the
// 400 MB goal (393-400 MB) and no layout change within reach (the
// records' own part is under a quarter) gave a clear margin; serve runs
// the memory store at GOGC=50 (298-303 MB), for about a quarter more CPU
// on this run (41-48 s against 33-37 s) and about 7% more on
// BenchmarkServe's small heap. A refused request allocates about 2 KB in
// the engine (its body canonicalised for the fingerprint before the store
// can refuse it, and the Retry-After header): garbage that makes
// collections more frequent, not part of the peak.
func TestServeMemoryAtMaxRecords(t *testing.T) {
	if os.Getenv("IDEMLINT_MEMORY_LOAD") != "1" {
		t.Skip("a measurement of minutes: IDEMLINT_MEMORY_LOAD=1 runs it")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the server's peak RSS from /proc")
	}
	policy := policyWith(t, func(doc map[string]any) {
		storage := doc["idempotency_storage"].(map[string]any)
		storage["max_records"] = memoryLoadMaxRecords
		storage["max_bytes"] = 1 << 30      // the records, not their bytes, are measured
		storage["max_tenant_percent"] = 100 // one tenant sends every key: its share would bind first
		storage["ttl"] = "1m"
		storage["ttl_reduction"] = map[string]any{"declared": true, "reason": "records must expire within the measurement"}
	})
	srv := startServeProcess(t, policy)

	start := time.Now()
	answers, lastCreated := sendUniqueKeys(t, srv.base, memoryLoadKeys, start.Add(memoryLoadDeadline))
	elapsed := time.Since(start)
	peakRSS := srv.memory(t, "VmHWM")
	peakLive, peakGoal := srv.gc.peak()
	t.Logf("%d unique keys from %d clients in %.0f s: %v", memoryLoadKeys, loadClients, elapsed.Seconds(), answers)
	t.Logf("peak RSS %d MB; peak live heap %d MB, peak heap goal %d MB", peakRSS>>20, peakLive>>20, peakGoal>>20)
	for status := range answers {
		if status != http.StatusCreated && status != http.StatusServiceUnavailable {
			t.Errorf("answers with status %d; want only 201 and 503 (store full)", status)
		}
	}
	if answers[http.StatusCreated] < memoryLoadMaxRecords {
		t.Errorf("%d keys created, want at least max_records", answers[http.StatusCreated])
	}

	// The last record created expires ttl later; with no traffic, its
	// memory must be free a minute after that.
	expired := lastCreated.Add(memoryLoadTTL)
	time.Sleep(time.Until(expired.Add(time.Minute)))
	live, at := srv.gc.last()
	t.Logf("a minute after the last record expired: live heap %d MB at the last collection, %.0f s after the expiry; RSS %d MB", live>>20, at.Sub(expired).Seconds(), srv.memory(t, "VmRSS")>>20)
	t.Logf("CPU of serve in all: %.0f s", srv.stop(t).Seconds())
}

// TestServeMemoryLargeBodies: 300 unique keys with 1 MB bodies (which
// once took serve from 18 MB to 724 MB RSS) stay within the memory
// store's max_bytes (default 128 MiB) and the demo's DemoKeepsBytes: the
// keys beyond are answered 503 idempotency_store_full with a Retry-After.
// It logs the RSS before and at the peak; it runs only when asked, as
// the figure is the process's own:
//
//	IDEMLINT_MEMORY_LOAD=1 go test -run TestServeMemoryLargeBodies -v ./reference/server
func TestServeMemoryLargeBodies(t *testing.T) {
	if os.Getenv("IDEMLINT_MEMORY_LOAD") != "1" {
		t.Skip("measures a process's RSS: IDEMLINT_MEMORY_LOAD=1 runs it")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the server's peak RSS from /proc")
	}
	srv := startServeProcess(t, policyFile)
	before := srv.memory(t, "VmRSS")
	body := `{"note":"` + strings.Repeat("x", 1<<20-11) + `"}`
	client := newLoadClient()
	var (
		mu      sync.Mutex
		answers = map[int]int{}
		next    atomic.Int64
		wg      sync.WaitGroup
	)
	const keys = 300
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1); i <= keys; i = next.Add(1) {
				req, err := http.NewRequest(http.MethodPost, srv.base+"/orders", strings.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				req.Header.Set("X-Idempotency-Key", "large-"+strconv.FormatInt(i, 10))
				// Spread over tenants, so that max_bytes binds before any
				// tenant's quarter of it.
				req.Header.Set("X-Tenant-Id", "tenant-"+strconv.FormatInt(i%8, 10))
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body) //nolint:errcheck // only the status counts
				resp.Body.Close()
				if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
					t.Errorf("key %d: 503 without Retry-After", i)
				}
				mu.Lock()
				answers[resp.StatusCode]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	peak := srv.memory(t, "VmHWM")
	t.Logf("%d keys with 1 MB bodies: %v; RSS %d MB before, peak %d MB", keys, answers, before>>20, peak>>20)
	if answers[http.StatusCreated] == 0 || answers[http.StatusServiceUnavailable] == 0 || answers[http.StatusCreated]+answers[http.StatusServiceUnavailable] != keys {
		t.Errorf("answers %v; want some created, the rest 503 once max_bytes is reached", answers)
	}
	// The records (128 MiB, one answer more per client), the demo's 16 MiB,
	// the bodies in flight and the collector's headroom at GOGC=50.
	if limit := int64(400 << 20); peak > limit {
		t.Errorf("peak RSS %d MB, more than %d MB", peak>>20, limit>>20)
	}
}

// serveProcess is a server run as a process of its own, so that its
// memory is its own.
type serveProcess struct {
	cmd  *exec.Cmd
	base string
	gc   *gcTrace
}

// startServeProcess starts a server process running serve's defaults on
// policy with GODEBUG=gctrace=1 until the test ends, and returns once it
// listens.
func startServeProcess(t *testing.T, policy string) *serveProcess {
	t.Helper()
	c := DefaultConfig()
	c.Addr, c.Policy = "127.0.0.1:0", policy
	p := &serveProcess{gc: &gcTrace{}}
	p.cmd, p.base = startProcess(t, c, p.gc, "GODEBUG=gctrace=1")
	return p
}

// stop stops the process and returns the CPU time it used.
func (p *serveProcess) stop(t *testing.T) time.Duration {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
}

// memory returns a size in bytes from the process's /proc status: VmHWM
// is the peak resident set, VmRSS the current one.
func (p *serveProcess) memory(t *testing.T, field string) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/PID/status", field)
	return 0
}

// gcTrace keeps the live heap and the next heap goal of each collection
// a GODEBUG=gctrace=1 process reports on the stderr written to it, with
// when it was read.
type gcTrace struct {
	mu      sync.Mutex
	partial []byte // the start of a line not yet ended
	lives   []int64
	goals   []int64
	times   []time.Time
}

// gcLine is the heap part of a gctrace line: heap at the start of the
// collection, at its end, live (marked), and the goal of the next, in MB.
var gcLine = regexp.MustCompile(`^gc \d+ .* (\d+)->(\d+)->(\d+) MB, (\d+) MB goal`)

// Write reads the lines of p, the access log and the trace.
func (g *gcTrace) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.partial = append(g.partial, p...)
	for {
		line, rest, ok := bytes.Cut(g.partial, []byte("\n"))
		if !ok {
			break
		}
		g.partial = rest
		if m := gcLine.FindSubmatch(line); m != nil {
			live, _ := strconv.ParseInt(string(m[3]), 10, 64) // digits
			goal, _ := strconv.ParseInt(string(m[4]), 10, 64)
			g.lives = append(g.lives, live<<20)
			g.goals = append(g.goals, goal<<20)
			g.times = append(g.times, time.Now())
		}
	}
	// The rest of an access line longer than any trace line is not kept.
	if len(g.partial) > 4<<10 {
		g.partial = g.partial[:0]
	}
	return len(p), nil
}

// peak returns the largest live heap and the largest heap goal.
func (g *gcTrace) peak() (live, goal int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range g.lives {
		live, goal = max(live, g.lives[i]), max(goal, g.goals[i])
	}
	return live, goal
}

// last returns the live heap of the last collection and when it was
// reported.
func (g *gcTrace) last() (live int64, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.lives) == 0 {
		return 0, time.Time{}
	}
	return g.lives[len(g.lives)-1], g.times[len(g.times)-1]
}

// loadClients is the number of concurrent clients of the loads.
const loadClients = 32

// loadOrder is the 1 KB order the loads send.
var loadOrder = `{"customerId": "C123", "items": [{"productId": "P001", "qty": 2}], "note": "` + strings.Repeat("x", 900) + `"}`

// newLoadClient returns the HTTP client of loadClients clients.
func newLoadClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadClients}, Timeout: 30 * time.Second}
}

// sendUniqueKeys sends n orders with unique keys to base from loadClients
// clients, until deadline, and returns how many got each status and when
// the last one created a record.
func sendUniqueKeys(t *testing.T, base string, n int, deadline time.Time) (map[int]int, time.Time) {
	client := newLoadClient()
	prefix := fmt.Sprintf("load-%d-", time.Now().UnixNano())
	var (
		next        atomic.Int64
		mu          sync.Mutex
		answers     = map[int]int{}
		lastCreated time.Time
		wg          sync.WaitGroup
	)
	for range loadClients {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || time.Now().After(deadline) {
					return
				}
				req, err := http.NewRequest(http.MethodPost, base+"/orders", strings.NewReader(loadOrder))
				if err != nil {
					t.Error(err)
					return
				}
				req.Header.Set("X-Idempotency-Key", prefix+strconv.FormatInt(i, 10))
				req.Header.Set("X-Tenant-Id", "tenant-a")
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body) //nolint:errcheck // only the status counts
				resp.Body.Close()
				mu.Lock()
				answers[resp.StatusCode]++
				if resp.StatusCode == http.StatusCreated {
					lastCreated = time.Now()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	sent := 0
	for _, count := range answers {
		sent += count
	}
	if sent < n {
		t.Errorf("only %d of %d keys answered by the deadline", sent, n)
	}
	return answers, lastCreated
}
