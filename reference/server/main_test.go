package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// processConfigEnv holds the Config, as JSON, of a test binary started
// as a server process of its own (startProcess): TestMain then runs only
// Run, for the tests that kill a server or measure its memory.
const processConfigEnv = "IDEMLINT_SERVER_PROCESS_CONFIG"

// TestMain runs the tests and stops the store servers they started, or,
// under processConfigEnv, is the server process: exit status 0 after a
// clean shutdown, 1 when Run failed, 2 when the config does not decode.
func TestMain(m *testing.M) {
	if c, ok := os.LookupEnv(processConfigEnv); ok {
		os.Exit(runProcess(c))
	}
	testserver.Main(m)
}

// runProcess runs Run on config, JSON, until SIGTERM; it returns the exit
// status.
func runProcess(config string) int {
	var c Config
	if err := json.Unmarshal([]byte(config), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := Run(context.Background(), c, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startProcess starts the test binary as a server running Run(c), with
// its stderr to stderr and env added to its environment, stopped with
// SIGTERM when t ends; it returns the process and its base URL once it
// listens.
func startProcess(t *testing.T, c Config, stderr io.Writer, env ...string) (*exec.Cmd, string) {
	t.Helper()
	config, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), processConfigEnv+"="+string(config)), env...)
	head := &testserver.SyncBuffer{Limit: 4 << 10} // why it did not start
	cmd.Stderr = io.MultiWriter(head, stderr)
	return cmd, testserver.StartListening(t, "server process", cmd, head.String)
}

// serving is one in-process Run of a test.
type serving struct {
	base   string // http://127.0.0.1:PORT
	stderr *testserver.SyncBuffer
	done   chan error // receives Run's result
	stop   context.CancelFunc
}

// startServing runs Run(c) until the test ends and returns once it
// listens.
func startServing(t *testing.T, c Config) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{stderr: &testserver.SyncBuffer{}, stop: cancel}
	base, done := startRunConfig(t, ctx, c, s.stderr)
	s.base, s.done = base, make(chan error, 1)
	go func() { s.done <- <-done }()
	t.Cleanup(func() {
		cancel()
		s.done <- <-s.done // for wait after the cleanup has run
	})
	return s
}

// wait returns Run's result, failing the test after a minute.
func (s *serving) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		return err
	case <-time.After(time.Minute):
		t.Fatal("Run did not return")
		return nil
	}
}

func (s *serving) send(t *testing.T, method, path, key, body string) testserver.Reply {
	t.Helper()
	return testserver.Send(t, method, s.base+path, key, body)
}

// policyWith writes the test policy, changed by edit, to a temporary file
// and returns its path.
func policyWith(t *testing.T, edit func(doc map[string]any)) string {
	t.Helper()
	return testserver.EditedPolicy(t, policyFile, edit)
}

// wantUnfinished fails the test unless err is ErrUnfinished.
func wantUnfinished(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, ErrUnfinished) {
		t.Errorf("Run = %v %s, want ErrUnfinished", err, what)
	}
}
