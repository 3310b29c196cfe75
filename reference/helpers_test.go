package reference

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// remove, as an edit value, deletes the member the pointer names.
var remove = &struct{}{}

// policySource returns testdata/<base> with edits applied: each key is a
// JSON pointer to an object member (created when absent), each value its
// new value, or remove.
func policySource(t testing.TB, base string, edits map[string]any) []byte {
	t.Helper()
	src, err := os.ReadFile("testdata/" + base)
	if err != nil {
		t.Fatal(err)
	}
	if len(edits) == 0 {
		return src
	}
	var doc map[string]any
	if err := json.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	for ptr, v := range edits {
		tokens := strings.Split(ptr, "/")[1:]
		var parent any = doc
		for _, tok := range tokens[:len(tokens)-1] {
			switch p := parent.(type) {
			case map[string]any:
				if p[tok] == nil {
					p[tok] = map[string]any{}
				}
				parent = p[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil {
					t.Fatalf("edit %s: %v", ptr, err)
				}
				parent = p[i]
			}
		}
		obj := parent.(map[string]any)
		last := tokens[len(tokens)-1]
		if v == remove {
			delete(obj, last)
		} else {
			obj[last] = v
		}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// quietLogger discards everything: panics the tests provoke would
// otherwise clutter the output.
var quietLogger = slog.New(slog.DiscardHandler)

// newEngine builds the engine of testdata/adapter.json with edits.
func newEngine(t testing.TB, edits map[string]any, opts ...Option) *Engine {
	t.Helper()
	e, err := New("adapter.json", policySource(t, "adapter.json", edits), append([]Option{WithLogger(quietLogger)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// fakeClock is a settable clock for expiry tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// app is a business handler for the tests: it counts its executions and
// answers 201 with the execution number and the request body, unless the
// test replaces what it does.
type app struct {
	runs    atomic.Int64
	started chan struct{} // receives once per execution, when set
	release chan struct{} // blocks every execution until closed, when set
	serve   func(w http.ResponseWriter, r *http.Request, run int64)
}

func (a *app) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := a.runs.Add(1)
	if a.started != nil {
		a.started <- struct{}{}
	}
	if a.release != nil {
		<-a.release
	}
	if a.serve != nil {
		a.serve(w, r, n)
		return
	}
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	io.WriteString(w, `{"run":`+strconv.FormatInt(n, 10)+`,"request":`+string(orNull(body))+`}`)
}

func orNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

// call is one request of a test.
type call struct {
	method, path, body string
	key                string // sent as the key header when not ""
	header             http.Header
}

func (c call) request() *http.Request {
	method, path := c.method, c.path
	if method == "" {
		method, path = http.MethodPost, "/orders"
	}
	r := httptest.NewRequest(method, path, strings.NewReader(c.body))
	for k, vs := range c.header {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	if c.key != "" {
		r.Header.Set("X-Idempotency-Key", c.key)
	}
	if r.Header.Get("X-Tenant-Id") == "" {
		r.Header.Set("X-Tenant-Id", "tenant-a")
	}
	return r
}

func do(h http.Handler, c call) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, c.request())
	return w
}

// problemOf decodes a problem+json response, failing the test when it is
// not one.
func problemOf(t *testing.T, w *httptest.ResponseRecorder) Problem {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json; body %s", ct, w.Body)
	}
	var p Problem
	dec := json.NewDecoder(bytes.NewReader(w.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("problem body %s: %v", w.Body, err)
	}
	if p.Status != w.Code || p.Type != "about:blank" || p.Title != http.StatusText(w.Code) || p.Detail == "" {
		t.Errorf("problem %+v does not describe status %d", p, w.Code)
	}
	return p
}

// wantProblem checks that w is the problem response status/code.
func wantProblem(t *testing.T, w *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status = %d, want %d; body %s", w.Code, status, w.Body)
	}
	if p := problemOf(t, w); p.ErrorCode != code {
		t.Errorf("error_code = %q, want %q", p.ErrorCode, code)
	}
}

// waitingTotal returns how many requests are waiting for an attempt of
// this engine to end.
func (e *Engine) waitingTotal() int {
	e.waiters.mu.Lock()
	defer e.waiters.mu.Unlock()
	n := 0
	for _, w := range e.waiters.m {
		n += w.refs
	}
	return n
}

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
