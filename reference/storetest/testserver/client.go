package testserver

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Reply is what a test request to a server got back.
type Reply struct {
	Status int
	Header http.Header
	Body   string
}

// Send sends a request of tenant-a (the tenant the test policies scope by)
// to url, with the idempotency key when key is not "", and reads the whole
// answer.
func Send(t testing.TB, method, url, key, body string) Reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-Idempotency-Key", key)
	}
	req.Header.Set("X-Tenant-Id", "tenant-a")
	return Do(t, req)
}

// Do sends req as it is and reads the whole answer, for a request Send
// cannot make (another key header, a form body).
func Do(t testing.TB, req *http.Request) Reply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Reply{resp.StatusCode, resp.Header, string(b)}
}

// SyncBuffer is a bytes.Buffer a server (its goroutines, or a process's
// output copier) may write while the test reads it. With Limit > 0 it
// keeps only the first Limit bytes written, enough to tell why a server
// did not start.
type SyncBuffer struct {
	Limit int
	mu    sync.Mutex
	b     bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Limit > 0 {
		s.b.Write(p[:min(len(p), max(0, s.Limit-s.b.Len()))])
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
