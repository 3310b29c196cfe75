package reference

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// bodyMeter counts the bytes read from the bodies of requests still being
// served, and the most it ever counted.
type bodyMeter struct {
	held, peak atomic.Int64
}

func (m *bodyMeter) add(n int64) {
	held := m.held.Add(n)
	for peak := m.peak.Load(); held > peak && !m.peak.CompareAndSwap(peak, held); peak = m.peak.Load() {
	}
}

// meteredBody is a request body that counts what is read from it. It is
// no *strings.Reader, so httptest.NewRequest leaves its length unknown.
type meteredBody struct {
	io.Reader
	meter *bodyMeter
	read  int64
}

func (b *meteredBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	b.read += int64(n)
	b.meter.add(int64(n))
	return n, err
}

// TestBodyMemoryBound: concurrent large bodies never hold more than the
// engine's body memory between them; the requests beyond it wait, then get
// 503 with Retry-After having read at most the first chunk of their
// bodies; and all of it is free again once the requests ended.
//
// The requests that fit start first and run before the others start: a
// request waiting for room holds its first chunk, so ten started at once
// may leave room for one whole body fewer, depending on who reads first.
func TestBodyMemoryBound(t *testing.T) {
	const limit = DefaultMaxBodyBytes
	const memory = 4 * limit
	body := `{"note":"` + strings.Repeat("x", limit-11) + `"}` // exactly the limit
	for _, tt := range []struct {
		name        string
		knownLength bool
		fit         int
	}{
		{"ContentLength", true, 4},  // each takes its length
		{"UnknownLength", false, 3}, // each takes the limit and one byte more
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, nil, WithMaxBodyMemory(memory))
			a := &app{release: make(chan struct{}), serve: func(w http.ResponseWriter, _ *http.Request, _ int64) { w.WriteHeader(http.StatusCreated) }}
			h := e.Middleware(a)
			var (
				meter    bodyMeter
				answered atomic.Int64
				wg       sync.WaitGroup
			)
			const requests = 10
			answers := make([]*httptest.ResponseRecorder, requests)
			bodies := make([]*meteredBody, requests)
			start := func(from, to int) {
				for i := from; i < to; i++ {
					bodies[i] = &meteredBody{Reader: strings.NewReader(body), meter: &meter}
					r := httptest.NewRequest(http.MethodPost, "/orders", bodies[i])
					if tt.knownLength {
						r.ContentLength = int64(len(body))
					}
					r.Header.Set("X-Idempotency-Key", "k"+strconv.Itoa(i))
					answers[i] = httptest.NewRecorder()
					wg.Go(func() {
						h.ServeHTTP(answers[i], r)
						meter.add(-bodies[i].read)
						answered.Add(1)
					})
				}
			}
			start(0, tt.fit)
			eventually(t, "the requests that fit run", func() bool { return a.runs.Load() == int64(tt.fit) })
			start(tt.fit, requests)
			// The handlers hold on to their bodies until released: the
			// others must be answered meanwhile.
			eventually(t, "every request runs or is answered", func() bool { return a.runs.Load()+answered.Load() == requests })
			if peak := meter.peak.Load(); peak > memory {
				t.Errorf("%d bytes of bodies held at once, more than the %d allowed", peak, memory)
			}
			if n := a.runs.Load(); n != int64(tt.fit) {
				t.Errorf("%d requests ran, want the %d that fit", n, tt.fit)
			}
			// Each running request holds its body's length, no more.
			if free := memory - int64(tt.fit*len(body)); !e.bodyMemory.TryAcquire(free) || e.bodyMemory.TryAcquire(1) {
				t.Errorf("the running requests do not hold exactly their %d bytes of bodies", tt.fit*len(body))
			} else {
				e.bodyMemory.Release(free)
			}
			close(a.release)
			wg.Wait()
			refused := 0
			for i, w := range answers {
				if w.Code == http.StatusCreated {
					continue
				}
				refused++
				wantProblem(t, w, http.StatusServiceUnavailable, CodeBodyMemoryExhausted)
				if got := w.Header().Get("Retry-After"); got != "1" {
					t.Errorf("request %d: Retry-After %q, want 1", i, got)
				}
				if bodies[i].read > bodyFirstChunk {
					t.Errorf("request %d: refused after reading %d bytes of its body, more than the first %d", i, bodies[i].read, bodyFirstChunk)
				}
			}
			if refused != requests-tt.fit {
				t.Errorf("%d requests refused, want %d", refused, requests-tt.fit)
			}
			if !e.bodyMemory.TryAcquire(memory) {
				t.Fatal("body memory still taken after every request ended")
			}
			e.bodyMemory.Release(memory)
		})
	}
}

// TestBodyTooLargeUnknownLength: without a Content-Length the limit holds
// too, and a refused body gives its memory back.
func TestBodyTooLargeUnknownLength(t *testing.T) {
	e := newEngine(t, nil, WithMaxBodyBytes(16), WithMaxBodyMemory(17))
	h := e.Middleware(&app{})
	for _, tt := range []struct {
		body string
		want int
	}{
		{`{"a":"0123456789"}`, http.StatusRequestEntityTooLarge},
		{`{"a":"01234567"}`, http.StatusCreated}, // exactly the limit
		{`{"a":"0123456789"}`, http.StatusRequestEntityTooLarge},
	} {
		r := httptest.NewRequest(http.MethodPost, "/orders", &meteredBody{Reader: strings.NewReader(tt.body), meter: &bodyMeter{}})
		r.Header.Set("X-Idempotency-Key", "k")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("%s without a length: %d %s, want %d", tt.body, w.Code, w.Body, tt.want)
		}
	}
}

// stalledBody sends its first bytes, then nothing until released.
type stalledBody struct {
	first   io.Reader
	release chan struct{}
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if n, _ := b.first.Read(p); n > 0 {
		return n, nil
	}
	<-b.release
	return 0, io.ErrUnexpectedEOF
}

// TestStalledBodiesHoldTheirFirstChunk: clients that announce the largest
// body and stall after a few bytes hold only the first chunk each, so that
// more of them than the body memory has room for cannot keep a whole body
// out; they hold even less once their bodies are cut.
func TestStalledBodiesHoldTheirFirstChunk(t *testing.T) {
	const memory = 4 * DefaultMaxBodyBytes
	e := newEngine(t, nil, WithMaxBodyMemory(memory))
	h := e.Middleware(&app{})
	release := make(chan struct{})
	var wg sync.WaitGroup
	const stalled = 10 // each announcing a largest body: two and a half times the memory
	for i := range stalled {
		r := httptest.NewRequest(http.MethodPost, "/orders", &stalledBody{first: strings.NewReader(`{"note":"`), release: release})
		r.ContentLength = DefaultMaxBodyBytes
		r.Header.Set("X-Idempotency-Key", "stalled"+strconv.Itoa(i))
		wg.Go(func() { h.ServeHTTP(httptest.NewRecorder(), r) })
	}
	eventually(t, "every stalled request holds its first chunk", func() bool {
		free := int64(memory - stalled*bodyFirstChunk)
		if !e.bodyMemory.TryAcquire(free) {
			return false
		}
		e.bodyMemory.Release(free)
		if e.bodyMemory.TryAcquire(free + 1) {
			e.bodyMemory.Release(free + 1)
			return false
		}
		return true
	})
	body := `{"note":"` + strings.Repeat("x", DefaultMaxBodyBytes-11) + `"}`
	r := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(body))
	r.Header.Set("X-Idempotency-Key", "whole")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusCreated {
		t.Errorf("a whole body among stalled ones: %d %s, want 201", w.Code, w.Body)
	}
	close(release)
	wg.Wait()
	if !e.bodyMemory.TryAcquire(memory) {
		t.Fatal("body memory still taken after every request ended")
	}
}
