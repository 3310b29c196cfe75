package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/reference/server"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// serveRun is one "idemlint serve" run of a test.
type serveRun struct {
	base   string // http://127.0.0.1:PORT
	stderr *testserver.SyncBuffer
	done   chan error // receives the command's result
	stop   context.CancelFunc
}

// startServe runs "serve --addr 127.0.0.1:0 args..." until the test ends
// and returns once it listens.
func startServe(t testing.TB, args ...string) *serveRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serveRun{stderr: &testserver.SyncBuffer{}, done: make(chan error, 1), stop: cancel}
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

func (s *serveRun) send(t *testing.T, method, path, key, body string) testserver.Reply {
	t.Helper()
	return testserver.Send(t, method, s.base+path, key, body)
}

const servePolicy = "../../reference/testdata/adapter.json"

// TestServeEndToEnd: the command serves the engine (whose behaviour
// reference/server tests) on its --addr, announces it on stdout, logs to
// stderr and ends cleanly with its context.
func TestServeEndToEnd(t *testing.T) {
	s := startServe(t, "--policy", servePolicy)
	created := s.send(t, "POST", "/orders", "key-1", `{"sku": "P1"}`)
	replay := s.send(t, "POST", "/orders", "key-1", `{"sku": "P1"}`)
	if created.Status != 201 || replay.Body != created.Body || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("create %d %s, then replay %d %s; want 201 replayed", created.Status, created.Body, replay.Status, replay.Body)
	}
	if got := s.send(t, "GET", "/_effects", "", ""); got.Body != `{"count":1}` {
		t.Errorf("effects after a creation and its replay: %s", got.Body)
	}
	s.stop()
	if err := s.wait(t); err != nil {
		t.Fatalf("serve returned %v after its context ended", err)
	}
	if want := "idempotency_key=key-1 outcome=replayed replayed=true"; !strings.Contains(s.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, s.stderr)
	}
}

// TestServeFlagsReachConfig: each flag sets its field of server.Config,
// and without flags the config is server.DefaultConfig's.
func TestServeFlagsReachConfig(t *testing.T) {
	parse := func(args ...string) server.Config {
		t.Helper()
		var c server.Config
		cmd := &cobra.Command{}
		serveFlags(cmd, &c)
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if diff := cmp.Diff(server.DefaultConfig(), parse()); diff != "" {
		t.Errorf("defaults (-server.DefaultConfig +flags):\n%s", diff)
	}
	want := server.Config{
		Policy: "p.json", Addr: "127.0.0.1:9", Store: "redis://127.0.0.1:1/2",
		DemoDelay: 2 * time.Second, ShutdownTimeout: 3 * time.Second, ReadTimeout: 4 * time.Second,
		MaxConnections: 5, MaxBodyMemoryMiB: 6, MinBodyRate: 7,
	}
	got := parse("--policy", "p.json", "--addr", "127.0.0.1:9", "--store", "redis://127.0.0.1:1/2",
		"--demo-delay", "2s", "--shutdown-timeout", "3s", "--read-timeout", "4s",
		"--max-connections", "5", "--max-body-memory", "6", "--min-body-rate", "7")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
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
// file and returns its path.
func servePolicyWith(t *testing.T, edit func(doc map[string]any)) string {
	t.Helper()
	return testserver.EditedPolicy(t, servePolicy, edit)
}

func TestServeRefusesInvalidPolicy(t *testing.T) {
	path := servePolicyWith(t, func(doc map[string]any) { delete(doc, "idempotency_inflight") })

	var out, errOut bytes.Buffer
	code := run([]string{"serve", "--policy", path}, &out, &errOut)
	stdout, stderr := out.String(), errOut.String()
	// 2, as "conform --reference" on the same policy: 1 means that
	// shutdown cut requests in flight.
	if code != exitUsage || stdout != "" {
		t.Errorf("serve exit status %d, stdout %q; want %d and nothing", code, stdout, exitUsage)
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
// request in flight (server.ErrUnfinished) exits 1.
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
	for s.send(t, "GET", "/_effects", "", "").Body != `{"count":1}` {
		if time.Now().After(deadline) {
			t.Fatal("the slow request never reached the demo")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.stop()
	if err := s.wait(t); err != exitCode(exitFindings) {
		t.Errorf("serve = %v after cutting a request, want exit status %d", err, exitFindings)
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
