package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer the server may write while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveRun is one "idemlint serve" run of a test.
type serveRun struct {
	base   string // http://127.0.0.1:PORT
	stderr *syncBuffer
	done   chan error // receives the command's result
	stop   context.CancelFunc
}

// startServe runs "serve --addr 127.0.0.1:0 args..." until the test ends
// and returns once it listens.
func startServe(t testing.TB, args ...string) *serveRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serveRun{stderr: &syncBuffer{}, done: make(chan error, 1), stop: cancel}
	cmd := newServeCmd()
	// As the root command does: an error is the caller's to report, and
	// nobody reads stdout after the first line.
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetArgs(append([]string{"--addr", "127.0.0.1:0"}, args...))
	stdout, w := io.Pipe()
	cmd.SetOut(w)
	cmd.SetErr(s.stderr)
	go func() {
		s.done <- cmd.ExecuteContext(ctx)
		w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		<-s.done
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("first output line %q (%v), want \"listening on http://ADDR\"; stderr:\n%s", line, err, s.stderr)
	}
	s.base = addr
	return s
}

// listenTimeout bounds how long a server process may take to listen.
const listenTimeout = 30 * time.Second

// startListening starts cmd, a server that prints "listening on ADDR" as
// its first line, stopped with SIGTERM when t ends, and returns ADDR.
// stderr returns what it wrote there, for the failure.
func startListening(t testing.TB, what string, cmd *exec.Cmd, stderr func() string) string {
	t.Helper()
	// Killed with the test binary should its cleanup never run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", what, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	first := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		first <- line
		_, _ = io.Copy(io.Discard, r) // so that it never blocks on a full pipe
	}()
	var line string
	select {
	case line = <-first:
	case <-time.After(listenTimeout):
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("%s: first output line %q within %v, want \"listening on ADDR\"; stderr:\n%s", what, line, listenTimeout, stderr())
	}
	return addr
}

// wait returns the command's result, failing the test after a while.
func (s *serveRun) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
		return nil
	}
}

type reply struct {
	status int
	header http.Header
	body   string
}

func (s *serveRun) send(t *testing.T, method, path, key, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-Idempotency-Key", key)
	}
	req.Header.Set("X-Tenant-Id", "tenant-a")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

const servePolicy = "../../reference/testdata/adapter.json"

func TestServeEndToEnd(t *testing.T) {
	s := startServe(t, "--policy", servePolicy)

	created := s.send(t, "POST", "/orders", "key-1", `{"sku": "P1", "qty": 2}`)
	if created.status != 201 || created.header.Get("Content-Type") != "application/json" || created.header.Get("X-Idempotency-Key") != "key-1" {
		t.Fatalf("create: %d %v %s", created.status, created.header, created.body)
	}
	var order struct {
		ID        string          `json:"id"`
		Operation string          `json:"operation"`
		Request   json.RawMessage `json:"request"`
	}
	if err := json.Unmarshal([]byte(created.body), &order); err != nil || order.ID == "" || order.Operation != "orders.create" || string(order.Request) != `{"sku":"P1","qty":2}` {
		t.Fatalf("create body %s (%v)", created.body, err)
	}

	replay := s.send(t, "POST", "/orders", "key-1", `{"qty":2,"sku":"P1"}`)
	if replay.status != 201 || replay.body != created.body || replay.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s, replayed %q; want the stored 201", replay.status, replay.body, replay.header.Get("Idempotent-Replayed"))
	}
	if other := s.send(t, "POST", "/orders", "key-2", `{"sku": "P2"}`); other.status != 201 || other.body == created.body {
		t.Errorf("another key: %d %s", other.status, other.body)
	}
	if got := s.send(t, "GET", "/_effects", "", ""); got.body != `{"count":2}` {
		t.Errorf("effects after two creations and a replay: %s", got.body)
	}
	if got := s.send(t, "GET", "/orders/"+order.ID, "", ""); got.status != 200 || got.body != created.body {
		t.Errorf("read by id: %d %s, want %s", got.status, got.body, created.body)
	}
	if got := s.send(t, "GET", "/orders", "", ""); got.status != 200 || !strings.HasPrefix(got.body, `{"items":[`+created.body+`,`) {
		t.Errorf("list: %d %s", got.status, got.body)
	}
	missing := s.send(t, "POST", "/orders", "", `{}`)
	if missing.status != 400 || missing.header.Get("Content-Type") != "application/problem+json" || !strings.Contains(missing.body, `"error_code":"idempotency_key_required"`) {
		t.Errorf("without a key: %d %s", missing.status, missing.body)
	}
	if got := s.send(t, "GET", "/nowhere", "", ""); got.status != 404 {
		t.Errorf("undeclared path: %d %s", got.status, got.body)
	}

	s.stop()
	if err := s.wait(t); err != nil {
		t.Fatalf("serve returned %v after its context ended", err)
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

// TestServeStopsOnSIGTERM sends the signal to the test process itself:
// serve has caught it before printing its address.
func TestServeStopsOnSIGTERM(t *testing.T) {
	s := startServe(t, "--policy", servePolicy)
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.wait(t); err != nil {
		t.Fatalf("serve returned %v after SIGTERM", err)
	}
	if !strings.Contains(s.stderr.String(), `msg="shutting down"`) {
		t.Errorf("stderr %q does not say it shut down", s.stderr)
	}
	if _, err := http.Get(s.base + "/_effects"); err == nil {
		t.Error("the server still answers after shutdown")
	}
}

// execServe runs the serve command alone, silenced as the root command
// silences it (run, once serve is wired into the root, adds "idemlint: "
// to the error and maps it to an exit status).
func execServe(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd := newServeCmd()
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

// servePolicyWith writes the serve policy, changed by edit, to a temporary
// file (on one line) and returns its path.
func servePolicyWith(t *testing.T, edit func(doc map[string]any)) string {
	t.Helper()
	src, err := os.ReadFile(servePolicy)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestServeRefusesInvalidPolicy(t *testing.T) {
	path := servePolicyWith(t, func(doc map[string]any) { delete(doc, "idempotency_inflight") })

	stdout, stderr, err := execServe("--policy", path)
	// 2, as "conform --reference" on the same policy: 1 means that
	// shutdown cut requests in flight.
	if err != exitCode(exitUsage) || stdout != "" {
		t.Errorf("serve = %v, stdout %q; want exit status %d and nothing", err, stdout, exitUsage)
	}
	if want := "idemlint: refusing to serve: " + path + " is not a usable adapter policy (1 error)\n"; !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, " error IDL109 ") {
		t.Errorf("stderr %q, want it to start with %q and name IDL109", stderr, want)
	}
}

func TestServeUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, `required flag(s) "policy" not set`},
		{[]string{"--policy", "absent.json"}, "absent.json: no such file or directory"},
		{[]string{"--policy", servePolicy, "--addr", "127.0.0.1:http-alt-x"}, "listen tcp: lookup tcp/http-alt-x: unknown port"},
		// The flags' ranges are server.Run's (TestRunRefusesSettingsOutOfRange).
		{[]string{"--policy", servePolicy, "--read-timeout", "0s"}, "--max-connections, --max-body-memory, --read-timeout and --shutdown-timeout must be positive, --demo-delay not negative"},
	} {
		stdout, _, err := execServe(tt.args...)
		if err == nil || err.Error() != tt.want || stdout != "" {
			t.Errorf("serve %q = %v, stdout %q; want %q", tt.args, err, stdout, tt.want)
		}
	}
}

// TestServeCutsRequestsAtShutdownTimeout: a shutdown that has to cut a
// request in flight exits 1 and says so.
func TestServeCutsRequestsAtShutdownTimeout(t *testing.T) {
	s := startServe(t, "--policy", servePolicy, "--demo-delay", "1m", "--shutdown-timeout", "100ms")
	go func() {
		req, _ := http.NewRequest("POST", s.base+"/orders", strings.NewReader(`{}`))
		req.Header.Set("X-Idempotency-Key", "slow")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for s.send(t, "GET", "/_effects", "", "").body != `{"count":1}` {
		if time.Now().After(deadline) {
			t.Fatal("the slow request never reached the demo")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.stop()
	if err := s.wait(t); err != exitCode(exitFindings) {
		t.Errorf("serve = %v after cutting a request, want exit status %d", err, exitFindings)
	}
	if !strings.Contains(s.stderr.String(), "shutdown cut requests still in flight") {
		t.Errorf("stderr does not say requests were cut:\n%s", s.stderr)
	}
}

// TestServeConnectionLimit: --max-connections reaches the listener: with
// its one slot held by an idle keep-alive connection, a new client is
// served at once (not after the minute the idle timeout allows), the idle
// one being closed for it.
func TestServeConnectionLimit(t *testing.T) {
	s := startServe(t, "--policy", servePolicy, "--max-connections", "1")
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
		t.Errorf("serve = %v, want a clean shutdown", err)
	}
}

func TestServeRefusesHugeHeaders(t *testing.T) {
	s := startServe(t, "--policy", servePolicy)
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

// TestServeStoreErrors: --store reaches server.OpenStore (tested there):
// a bad one is a usage error, and one that cannot be reached is reported
// without the password of its URL.
func TestServeStoreErrors(t *testing.T) {
	const secret = "s3cret-pass-123"
	for _, tt := range []struct{ store, want string }{
		{"mysql://db", `--store must be "memory"`},
		{"postgres://user:" + secret + "@127.0.0.1:1/db?connect_timeout=5", "postgres store"},
	} {
		stdout, stderr, err := execServe("--policy", servePolicy, "--store", tt.store)
		if err == nil || !strings.Contains(err.Error(), tt.want) || stdout != "" {
			t.Errorf("--store %s: %v, stdout %q; want an error mentioning %q", tt.store, err, stdout, tt.want)
			continue
		}
		if strings.Contains(err.Error()+stderr, secret) {
			t.Errorf("--store %s: the password appears in the output: %v %s", tt.store, err, stderr)
		}
	}
}

// TestServeCutsStalledBody: --min-body-rate reaches the server: clients
// that announce bodies and stall are answered 400 and cut long before the
// read timeout, and meanwhile hold so little body memory that a whole
// body is served, although their announced bodies take all of it.
func TestServeCutsStalledBody(t *testing.T) {
	s := startServe(t, "--policy", servePolicy, "--max-body-memory", "2", "--read-timeout", "1h", "--min-body-rate", "1000")
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
	if got := s.send(t, "POST", "/orders", "other", body); got.status != http.StatusCreated {
		t.Fatalf("a whole body while stalled ones wait: %d %q, want 201", got.status, got.body)
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
