package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

const policyFile = "../testdata/adapter.json"

func testConfig(policy string) Config {
	return Config{Policy: policy, Addr: "127.0.0.1:0", Store: "memory", ShutdownTimeout: 10 * time.Second,
		ReadTimeout: DefaultReadTimeout, MaxConnections: 8, MaxBodyMemoryMiB: 1}
}

// startRun runs Run on the test config until ctx ends and returns the
// base URL it announced and the channel of its result.
func startRun(t *testing.T, ctx context.Context, stderr io.Writer) (string, <-chan error) {
	t.Helper()
	return startRunConfig(t, ctx, testConfig(policyFile), stderr)
}

// startRunConfig is startRun with c.
func startRunConfig(t *testing.T, ctx context.Context, c Config, stderr io.Writer) (string, <-chan error) {
	t.Helper()
	out, stdout := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, c, stdout, stderr)
		stdout.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no address announced: %v (Run: %v)", err, <-done)
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("Run announced %q", line)
	}
	go io.Copy(io.Discard, out) //nolint:errcheck // nothing more is expected
	return base, done
}

// Run serves until its context ends, then shuts down cleanly.
func TestRunServesUntilTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done := startRun(t, ctx, io.Discard)
	resp, err := http.Get(base + "/_health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /_health: %s", resp.Status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after the context ended = %v, want nil", err)
	}
}

func TestRunRefusesAPolicyTheEngineRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, []byte(`{"spec_version": "idemlint.boundary/v1", "boundary": "adapter"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), testConfig(path), io.Discard, io.Discard)
	if invalid := (*reference.InvalidPolicyError)(nil); !errors.As(err, &invalid) || !strings.HasPrefix(err.Error(), "refusing to serve: "+path+" is not a usable adapter policy (") {
		t.Errorf("Run = %v, want the refusal of a *reference.InvalidPolicyError", err)
	}
}

// Settings out of range are refused before anything is opened, naming
// the flags that give them.
func TestRunRefusesSettingsOutOfRange(t *testing.T) {
	const positive = "--max-connections, --max-body-memory, --read-timeout and --shutdown-timeout must be positive, --demo-delay not negative"
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.MaxConnections = 0 }, positive},
		{func(c *Config) { c.MaxBodyMemoryMiB = 0 }, positive},
		{func(c *Config) { c.ReadTimeout = 0 }, positive},
		{func(c *Config) { c.ShutdownTimeout = -time.Second }, positive},
		{func(c *Config) { c.DemoDelay = -time.Second }, positive},
		{func(c *Config) { c.MinBodyRate = -1 }, "--min-body-rate must not be negative"},
	} {
		c := testConfig(policyFile)
		c.Store = "redis://127.0.0.1:1" // never dialled: the settings are refused first
		tc.change(&c)
		if err := Run(context.Background(), c, io.Discard, io.Discard); err == nil || err.Error() != tc.want {
			t.Errorf("Run(%+v) = %v, want %s", c, err, tc.want)
		}
	}
}

// TestRunServesTheDemo: the engine in front of the demo executes a key
// once and replays it, /_effects counts the executions, reads see what
// was created, and every request is logged with its key and outcome.
func TestRunServesTheDemo(t *testing.T) {
	s := startServing(t, testConfig(policyFile))

	created := s.send(t, "POST", "/orders", "key-1", `{"sku": "P1", "qty": 2}`)
	if created.Status != 201 || created.Header.Get("Content-Type") != "application/json" || created.Header.Get("X-Idempotency-Key") != "key-1" {
		t.Fatalf("create: %d %v %s", created.Status, created.Header, created.Body)
	}
	var order struct {
		ID        string          `json:"id"`
		Operation string          `json:"operation"`
		Request   json.RawMessage `json:"request"`
	}
	if err := json.Unmarshal([]byte(created.Body), &order); err != nil || order.ID == "" || order.Operation != "orders.create" || string(order.Request) != `{"sku":"P1","qty":2}` {
		t.Fatalf("create body %s (%v)", created.Body, err)
	}

	replay := s.send(t, "POST", "/orders", "key-1", `{"qty":2,"sku":"P1"}`)
	if replay.Status != 201 || replay.Body != created.Body || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s, replayed %q; want the stored 201", replay.Status, replay.Body, replay.Header.Get("Idempotent-Replayed"))
	}
	if other := s.send(t, "POST", "/orders", "key-2", `{"sku": "P2"}`); other.Status != 201 || other.Body == created.Body {
		t.Errorf("another key: %d %s", other.Status, other.Body)
	}
	if got := s.send(t, "GET", "/_effects", "", ""); got.Body != `{"count":2}` {
		t.Errorf("effects after two creations and a replay: %s", got.Body)
	}
	if got := s.send(t, "GET", "/orders/"+order.ID, "", ""); got.Status != 200 || got.Body != created.Body {
		t.Errorf("read by id: %d %s, want %s", got.Status, got.Body, created.Body)
	}
	if got := s.send(t, "GET", "/orders", "", ""); got.Status != 200 || !strings.HasPrefix(got.Body, `{"items":[`+created.Body+`,`) {
		t.Errorf("list: %d %s", got.Status, got.Body)
	}
	missing := s.send(t, "POST", "/orders", "", `{}`)
	if missing.Status != 400 || missing.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(missing.Body, `"error_code":"idempotency_key_required"`) {
		t.Errorf("without a key: %d %s", missing.Status, missing.Body)
	}
	if got := s.send(t, "GET", "/nowhere", "", ""); got.Status != 404 {
		t.Errorf("undeclared path: %d %s", got.Status, got.Body)
	}

	s.stop()
	if err := s.wait(t); err != nil {
		t.Fatalf("Run returned %v after its context ended", err)
	}
	var lines []string
	for line := range strings.Lines(s.stderr.String()) {
		if strings.Contains(line, "msg=request ") {
			lines = append(lines, line)
		}
	}
	if len(lines) != 8 {
		t.Errorf("%d request log lines for 8 requests:\n%s", len(lines), s.stderr)
	}
	for i, want := range []string{
		"method=POST path=/orders status=201 operation=orders.create idempotency_key=key-1 outcome=executed replayed=false",
		"method=POST path=/orders status=201 operation=orders.create idempotency_key=key-1 outcome=replayed replayed=true",
	} {
		if i < len(lines) && !strings.Contains(lines[i], want) {
			t.Errorf("log line %d = %q, want it to contain %q", i, lines[i], want)
		}
	}
}

// TestRunStopsOnSIGTERM sends the signal to the test process itself: Run
// has caught it before announcing its address.
func TestRunStopsOnSIGTERM(t *testing.T) {
	s := startServing(t, testConfig(policyFile))
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.wait(t); err != nil {
		t.Fatalf("Run returned %v after SIGTERM", err)
	}
	if !strings.Contains(s.stderr.String(), `msg="shutting down"`) {
		t.Errorf("stderr %q does not say it shut down", s.stderr)
	}
	if _, err := http.Get(s.base + "/_effects"); err == nil {
		t.Error("the server still answers after shutdown")
	}
}

// TestRunCutsRequestsAtShutdownTimeout: a shutdown that has to cut a
// request in flight ends in ErrUnfinished and says so.
func TestRunCutsRequestsAtShutdownTimeout(t *testing.T) {
	c := testConfig(policyFile)
	c.DemoDelay, c.ShutdownTimeout = time.Minute, 100*time.Millisecond
	s := startServing(t, c)
	go func() { // answered by the cut, or not at all
		req, _ := http.NewRequest("POST", s.base+"/orders", strings.NewReader(`{}`))
		req.Header.Set("X-Idempotency-Key", "slow")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	waitUntil(t, "the slow request reaches the demo", func() bool { return s.send(t, "GET", "/_effects", "", "").Body == `{"count":1}` })
	s.stop()
	wantUnfinished(t, s.wait(t), "after cutting a request")
	if !strings.Contains(s.stderr.String(), "shutdown cut requests still in flight") {
		t.Errorf("stderr does not say requests were cut:\n%s", s.stderr)
	}
}

// TestRunConnectionLimit: Config.MaxConnections reaches the listener:
// with its one slot held by an idle keep-alive connection, a new client
// is served at once (not after the minute the idle timeout allows), the
// idle one being closed for it.
func TestRunConnectionLimit(t *testing.T) {
	c := testConfig(policyFile)
	c.MaxConnections = 1
	s := startServing(t, c)
	idle := &http.Client{Transport: &http.Transport{}}
	if resp, err := idle.Get(s.base + "/_effects"); err != nil {
		t.Fatal(err)
	} else {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// Well below the idle timeout, far above what serving takes.
	newcomer := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}
	resp, err := newcomer.Get(s.base + "/_effects")
	if err != nil {
		t.Fatalf("a new client while the only slot is held by an idle connection: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s.stop()
	if err := s.wait(t); err != nil {
		t.Errorf("Run = %v, want a clean shutdown", err)
	}
}

func TestRunRefusesHugeHeaders(t *testing.T) {
	s := startServing(t, testConfig(policyFile))
	req, err := http.NewRequest("GET", s.base+"/_effects", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Filler", strings.Repeat("a", 200<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("200 KiB of headers: %d, want 431", resp.StatusCode)
	}
}

// TestRunCutsStalledBody: Config.MinBodyRate reaches the server: clients
// that announce bodies and stall are answered 400 and cut long before the
// read timeout, and meanwhile hold so little body memory that a whole
// body is served, although their announced bodies take all of it.
func TestRunCutsStalledBody(t *testing.T) {
	c := testConfig(policyFile)
	c.MaxBodyMemoryMiB, c.ReadTimeout, c.MinBodyRate = 2, time.Hour, 1000
	s := startServing(t, c)
	const size = 1 << 20
	var stalled []net.Conn
	for i := range 2 {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /orders HTTP/1.1\r\nHost: localhost\r\nX-Idempotency-Key: stalled-%d\r\nX-Tenant-Id: tenant-a\r\nContent-Length: %d\r\n\r\n{\"note\": \"", i, size)
		stalled = append(stalled, c)
	}

	body := `{"note":"` + strings.Repeat("x", size-11) + `"}`
	if got := s.send(t, "POST", "/orders", "other", body); got.Status != http.StatusCreated {
		t.Fatalf("a whole body while stalled ones wait: %d %q, want 201", got.Status, got.Body)
	}
	for _, c := range stalled {
		c.SetReadDeadline(time.Now().Add(time.Minute))
		answer, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("a stalled client was not cut: %v", err)
		}
		if !strings.HasPrefix(string(answer), "HTTP/1.1 400 ") {
			t.Errorf("a stalled client was answered %q, want 400", answer)
		}
	}
}

// TestRunWarnsOfVolatileRedis: the tests' Redis keeps no append-only
// file, so Run warns at start, in the log and on /_health; the memory
// store has nothing to warn of.
func TestRunWarnsOfVolatileRedis(t *testing.T) {
	c := testConfig(policyFile)
	c.Store = testserver.StartRedis(t).DatabaseURL(t)
	s := startServing(t, c)
	status, warnings := health(t, s)
	if status != "warn" || len(warnings) != 1 || !strings.Contains(warnings[0], "Redis persists nothing") {
		t.Errorf("/_health on a Redis without persistence: %s %q, want one warning that it persists nothing", status, warnings)
	}
	if want := `level=WARN msg="idempotency store: records can be lost" warning="Redis persists nothing`; !strings.Contains(s.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, s.stderr)
	}
	if status, warnings := health(t, startServing(t, testConfig(policyFile))); status != "ok" || len(warnings) != 0 {
		t.Errorf("/_health on the memory store: %s %q, want ok", status, warnings)
	}
}

// TestRunWarnsOfAsyncPostgres: the tests' PostgreSQL runs with fsync and
// synchronous_commit off, and Run says so on /_health.
func TestRunWarnsOfAsyncPostgres(t *testing.T) {
	c := testConfig(policyFile)
	c.Store = testserver.StartPostgres(t).DatabaseURL(t)
	if status, warnings := health(t, startServing(t, c)); status != "warn" || len(warnings) != 2 {
		t.Errorf("/_health on PostgreSQL without fsync: %s %q, want two warnings", status, warnings)
	}
}

// health reads s's /_health.
func health(t *testing.T, s *serving) (status string, warnings []string) {
	t.Helper()
	r := s.send(t, "GET", "/_health", "", "")
	var h struct {
		Status   string
		Warnings []string
	}
	if err := json.Unmarshal([]byte(r.Body), &h); r.Status != 200 || err != nil {
		t.Fatalf("/_health: %d %s (%v)", r.Status, r.Body, err)
	}
	return h.Status, h.Warnings
}
