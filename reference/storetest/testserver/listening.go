package testserver

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ListenTimeout bounds how long a server process may take to listen.
const ListenTimeout = 30 * time.Second

// StartListening starts cmd, a server that prints "listening on ADDR" as
// its first line, stopped with SIGTERM when t ends unless it was stopped
// already, and returns ADDR. what names the server and stderr returns what
// it wrote there, for the failure.
func StartListening(t testing.TB, what string, cmd *exec.Cmd, stderr func() string) string {
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
		if cmd.ProcessState == nil { // not stopped by the test
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
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
	case <-time.After(ListenTimeout):
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("%s: first output line %q within %v, want \"listening on ADDR\"; stderr:\n%s", what, line, ListenTimeout, stderr())
	}
	return addr
}
