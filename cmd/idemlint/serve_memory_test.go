package main

import (
	"bufio"
	"context"
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

// TestServeMemoryAtMaxRecords measures "idemlint serve" on the memory
// store at max_records 100,000 and ttl 1m: 1,000,000 unique keys with 1 KB
// bodies from 32 clients, then no traffic. It prints how the requests
// were answered, the server's peak RSS, live heap and heap goal (from
// GODEBUG=gctrace=1); then, a minute after the last record expired, its
// RSS and the live heap of its last collection; and the CPU it used. It
// is a measurement of minutes, so it runs only when asked:
//
//	IDEMLINT_MEMORY_LOAD=1 go test -run TestServeMemoryAtMaxRecords -v -timeout 20m ./cmd/idemlint
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
	policy := servePolicyWith(t, func(doc map[string]any) {
		storage := doc["idempotency_storage"].(map[string]any)
		storage["max_records"] = memoryLoadMaxRecords
		storage["max_bytes"] = 1 << 30 // the records, not their bytes, are measured
		storage["ttl"] = "1m"
		storage["ttl_reduction"] = map[string]any{"declared": true, "reason": "records must expire within the measurement"}
	})
	srv := startServeProcess(t, "--policy", policy)

	start := time.Now()
	answers, lastCreated := sendUniqueKeys(t, srv.base, memoryLoadKeys, start.Add(memoryLoadDeadline))
	elapsed := time.Since(start)
	peakRSS := srv.memory(t, "VmHWM")
	peakLive, peakGoal := srv.gc.peak()
	t.Logf("%d unique keys from %d clients in %.0f s: %v", memoryLoadKeys, benchWorkers, elapsed.Seconds(), answers)
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
//	IDEMLINT_MEMORY_LOAD=1 go test -run TestServeMemoryLargeBodies -v ./cmd/idemlint
func TestServeMemoryLargeBodies(t *testing.T) {
	if os.Getenv("IDEMLINT_MEMORY_LOAD") != "1" {
		t.Skip("measures a process's RSS: IDEMLINT_MEMORY_LOAD=1 runs it")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the server's peak RSS from /proc")
	}
	srv := startServeProcess(t, "--policy", servePolicy)
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

// serveProcess is "idemlint serve" run as a process of its own, so that
// its memory is its own.
type serveProcess struct {
	cmd  *exec.Cmd
	base string
	gc   *gcTrace
}

// startServeProcess starts "idemlint serve --addr 127.0.0.1:0 args..."
// with GODEBUG=gctrace=1 until the test ends, and returns once it listens.
// TestMain put idemlint on the PATH.
func startServeProcess(t *testing.T, args ...string) *serveProcess {
	t.Helper()
	cmd := exec.Command("idemlint", append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, gc: readGCTrace(stderr)}
	t.Cleanup(func() {
		if cmd.ProcessState == nil { // not stopped yet
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("first output line %q (%v), want \"listening on http://ADDR\"; stderr begins:\n%s", line, err, p.gc.head())
	}
	go io.Copy(io.Discard, stdout) //nolint:errcheck // nothing more is expected
	p.base = addr
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
// a GODEBUG=gctrace=1 process reports, with when it was read.
type gcTrace struct {
	mu    sync.Mutex
	lives []int64
	goals []int64
	times []time.Time
	first []string // the first lines, to tell why a server did not start
}

// gcLine is the heap part of a gctrace line: heap at the start of the
// collection, at its end, live (marked), and the goal of the next, in MB.
var gcLine = regexp.MustCompile(`^gc \d+ .* (\d+)->(\d+)->(\d+) MB, (\d+) MB goal`)

// readGCTrace reads the process's stderr (its access log and the trace)
// until it closes.
func readGCTrace(stderr io.Reader) *gcTrace {
	g := &gcTrace{}
	go func() {
		lines := bufio.NewScanner(stderr)
		lines.Buffer(nil, 1<<20)
		for lines.Scan() {
			g.mu.Lock()
			if len(g.first) < 10 {
				g.first = append(g.first, lines.Text())
			}
			g.mu.Unlock()
			m := gcLine.FindStringSubmatch(lines.Text())
			if m == nil {
				continue
			}
			live, _ := strconv.ParseInt(m[3], 10, 64) // digits
			goal, _ := strconv.ParseInt(m[4], 10, 64)
			g.mu.Lock()
			g.lives = append(g.lives, live<<20)
			g.goals = append(g.goals, goal<<20)
			g.times = append(g.times, time.Now())
			g.mu.Unlock()
		}
	}()
	return g
}

// head returns the first lines read.
func (g *gcTrace) head() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return strings.Join(g.first, "\n")
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

// sendUniqueKeys sends n orders with unique keys to base from benchWorkers
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
	for range benchWorkers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || time.Now().After(deadline) {
					return
				}
				resp, err := client.Do(newOrder(context.Background(), base, prefix+strconv.FormatInt(i, 10)))
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
