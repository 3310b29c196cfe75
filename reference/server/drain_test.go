package server

import (
	"bytes"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// storeProxy forwards TCP connections to a Unix socket (the tests'
// Redis) until cut: then it closes every connection and closes new ones at
// once, as a store that went down, until restored. It cuts itself when a
// client sends its marker, dropping that command.
type storeProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	down   bool
	marker []byte
	conns  map[net.Conn]struct{}
}

func startStoreProxy(t *testing.T, socket string) *storeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &storeProxy{ln: ln, target: socket, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.accept()
	return p
}

// redisURL is the URL of database db of the Redis behind the proxy.
func (p *storeProxy) redisURL(t *testing.T, db string) string {
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	return "redis://" + p.ln.Addr().String() + "/" + u.Query().Get("db")
}

func (p *storeProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		s, err := net.Dial("unix", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[s] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go p.forward(s, c)
		go p.forward(c, s)
	}
}

func (p *storeProxy) forward(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if p.trips(buf[:n]) {
			p.cut()
			return
		}
		if _, werr := dst.Write(buf[:n]); werr != nil || err != nil {
			return
		}
	}
}

// trips reports whether b holds the marker.
func (p *storeProxy) trips(b []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.marker != nil && bytes.Contains(b, p.marker)
}

// cutOn makes the proxy cut itself when a client sends marker.
func (p *storeProxy) cutOn(marker string) {
	p.mu.Lock()
	p.marker = []byte(marker)
	p.mu.Unlock()
}

func (p *storeProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *storeProxy) restore() {
	p.mu.Lock()
	p.down, p.marker = false, nil
	p.mu.Unlock()
}

// shutdownConfig: duplicates are rejected at once while an attempt runs,
// and the lease outlasts every test.
func shutdownConfig(t *testing.T, store string, shutdownTimeout time.Duration) Config {
	c := testConfig(policyWith(t, func(doc map[string]any) {
		doc["idempotency_inflight"] = map[string]any{"policy": "reject", "status": 409, "lease_ms": 60000}
	}))
	c.Store, c.ShutdownTimeout = store, shutdownTimeout
	return c
}

// finishWhileStoreDown sends a request to s and cuts the store when the
// engine records the demo's answer (the only command that carries it), so
// that the end of the attempt is retried in the background; it returns
// the request's answer.
func finishWhileStoreDown(t *testing.T, s *serving, proxy *storeProxy, key string) testserver.Reply {
	t.Helper()
	proxy.cutOn(`"operation":"orders.create"`)
	r := s.send(t, "POST", "/orders", key, `{}`)
	waitUntil(t, "Run retries recording the attempt", func() bool {
		return strings.Contains(s.stderr.String(), "cannot record the end of the attempt; retrying")
	})
	return r
}

// TestRunShutdownWaitsForEndWrites: the store is down when a handler
// finishes, and shutdown is asked for; Run waits for the store to come
// back and records the attempt, so a duplicate on another replica
// replays it instead of executing the key again after the lease.
func TestRunShutdownWaitsForEndWrites(t *testing.T) {
	redis := testserver.StartRedis(t)
	db := redis.DatabaseURL(t)
	proxy := startStoreProxy(t, redis.Socket)
	c := shutdownConfig(t, proxy.redisURL(t, db), time.Minute)
	s := startServing(t, c)
	first := finishWhileStoreDown(t, s, proxy, "drained")
	if first.Status != http.StatusCreated {
		t.Fatalf("first: %d %s, want the demo's 201 although the store is down", first.Status, first.Body)
	}
	s.stop()
	waitUntil(t, "Run shuts down", func() bool { return strings.Contains(s.stderr.String(), `msg="shutting down"`) })
	proxy.restore()
	if err := s.wait(t); err != nil {
		t.Fatalf("Run = %v, want a clean end once the attempt was recorded; stderr:\n%s", err, s.stderr)
	}
	c.Store = db
	other := startServing(t, c)
	if dup := other.send(t, "POST", "/orders", "drained", `{}`); dup.Status != http.StatusCreated || dup.Body != first.Body {
		t.Errorf("duplicate on another replica: %d %s, want the first answer replayed", dup.Status, dup.Body)
	}
}

// TestRunShutdownNamesUnrecordedKeys: when the store stays down through
// the shutdown timeout, Run ends in ErrUnfinished and names the key that
// may run again.
func TestRunShutdownNamesUnrecordedKeys(t *testing.T) {
	redis := testserver.StartRedis(t)
	proxy := startStoreProxy(t, redis.Socket)
	s := startServing(t, shutdownConfig(t, proxy.redisURL(t, redis.DatabaseURL(t)), 200*time.Millisecond))
	finishWhileStoreDown(t, s, proxy, "unrecorded-key")
	s.stop()
	wantUnfinished(t, s.wait(t), "with the store down")
	if want := `msg="shutdown: the end of the attempt could not be recorded; its key may run again once its lease lapses" operation=orders.create idempotency_key=unrecorded-key`; !strings.Contains(s.stderr.String(), want) {
		t.Errorf("stderr does not name the key with %q:\n%s", want, s.stderr)
	}
}

// TestRunShutdownReleasesCutAttempts: a request cut at the shutdown
// timeout is not stored as a failure; a retry on another replica
// executes it.
func TestRunShutdownReleasesCutAttempts(t *testing.T) {
	c := shutdownConfig(t, testserver.StartRedis(t).DatabaseURL(t), 100*time.Millisecond)
	slow := c
	slow.DemoDelay = time.Minute
	s := startServing(t, slow)
	go func() { // answered by the cut, or not at all
		req, _ := http.NewRequest("POST", s.base+"/orders", strings.NewReader(`{}`))
		req.Header.Set("X-Idempotency-Key", "cut")
		req.Header.Set("X-Tenant-Id", "tenant-a")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	waitUntil(t, "the demo runs", func() bool { return s.send(t, "GET", "/_effects", "", "").Body == `{"count":1}` })
	s.stop()
	wantUnfinished(t, s.wait(t), "after cutting a request")
	other := startServing(t, c)
	if retry := other.send(t, "POST", "/orders", "cut", `{}`); retry.Status != http.StatusCreated || retry.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("retry on another replica: %d %s, want a new execution", retry.Status, retry.Body)
	}
}
