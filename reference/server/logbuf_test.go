package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// TestLogBufferOrder: buffered lines wait, a direct line goes out at once
// after them, Close writes what is left and every later line at once.
func TestLogBufferOrder(t *testing.T) {
	var out testserver.SyncBuffer
	b := newLogBuffer(&out, time.Hour) // the timer never fires here
	step := func(w io.Writer, line, want string) {
		t.Helper()
		if _, err := io.WriteString(w, line); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != want {
			t.Fatalf("after writing %q: %q, want %q", line, got, want)
		}
	}
	step(b, "access 1\n", "")
	step(b, "access 2\n", "")
	step(b.Direct(), "error\n", "access 1\naccess 2\nerror\n")
	step(b, "access 3\n", "access 1\naccess 2\nerror\n")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "access 1\naccess 2\nerror\naccess 3\n"; got != want {
		t.Fatalf("after Close: %q, want %q", got, want)
	}
	step(b, "access 4\n", "access 1\naccess 2\nerror\naccess 3\naccess 4\n")
}

// TestLogBufferWritesWhenFull: the buffer never holds more than
// logBufferSize; lines beyond it push the earlier ones out, whole.
func TestLogBufferWritesWhenFull(t *testing.T) {
	var out testserver.SyncBuffer
	b := newLogBuffer(&out, time.Hour)
	line := strings.Repeat("x", 99) + "\n"
	n := logBufferSize/len(line) + 1
	for range n {
		b.Write([]byte(line)) //nolint:errcheck // SyncBuffer does not fail
	}
	got := out.String()
	if len(got) == 0 || len(got) > logBufferSize || len(got)%len(line) != 0 {
		t.Fatalf("%d bytes written after %d lines of %d; want whole lines, at most %d bytes", len(got), n, len(line), logBufferSize)
	}
	b.Close()
	if got := out.String(); len(got) != n*len(line) {
		t.Errorf("%d bytes after Close, want %d", len(got), n*len(line))
	}
}

// TestLogBufferFlushesByItself: a line is written without Flush or Close
// once the delay passed.
func TestLogBufferFlushesByItself(t *testing.T) {
	var out testserver.SyncBuffer
	b := newLogBuffer(&out, time.Millisecond)
	defer b.Close()
	b.Write([]byte("access\n")) //nolint:errcheck // SyncBuffer does not fail
	waitUntil(t, "the line is written", func() bool { return out.String() == "access\n" })
	b.Write([]byte("again\n")) //nolint:errcheck // SyncBuffer does not fail
	waitUntil(t, "the next line is written", func() bool { return out.String() == "access\nagain\n" })
}

// waitUntil polls cond for up to a minute: long enough for any loaded
// machine, so the test never depends on timing.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for: %s", what)
		}
	}
}

// TestRunLogsEveryRequestByExit: when Run returns, the access line of
// every request answered is written, that of a request that finished
// during the shutdown too, which no later line pushes out.
func TestRunLogsEveryRequestByExit(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr testserver.SyncBuffer
	c := testConfig(policyFile)
	c.DemoDelay = time.Second // the last request is still running at shutdown
	base, done := startRunConfig(t, ctx, c, &stderr)
	post := func(key string) error {
		req, _ := http.NewRequest(http.MethodPost, base+"/orders", strings.NewReader(`{}`))
		req.Header.Set("X-Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	const requests = 2
	for i := range requests - 1 {
		if err := post(fmt.Sprint("key-", i)); err != nil {
			t.Fatal(err)
		}
	}
	last := make(chan error, 1)
	go func() { last <- post("last") }()
	waitUntil(t, "the last request runs", func() bool {
		resp, err := http.Get(base + "/_effects")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body) == fmt.Sprintf(`{"count":%d}`, requests)
	})
	cancel()
	if err := <-last; err != nil {
		t.Fatalf("the request running at shutdown: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	log := stderr.String()
	if got := strings.Count(log, "msg=request method=POST "); got != requests {
		t.Errorf("%d access lines for %d requests:\n%s", got, requests, log)
	}
	if _, after, _ := strings.Cut(log, `msg="shutting down"`); !strings.Contains(after, "idempotency_key=last") {
		t.Errorf("the request running at shutdown is not logged after the shutdown began:\n%s", log)
	}
}
