package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// startServer serves h on 127.0.0.1 with o and returns its server;
// grace, when positive, replaces NewConnGrace.
func startServer(t testing.TB, h http.Handler, o Options, grace time.Duration) *Server {
	t.Helper()
	s, err := Listen("127.0.0.1:0", h, o)
	if err != nil {
		t.Fatal(err)
	}
	if grace > 0 {
		s.listener.grace = grace
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != http.ErrServerClosed {
			t.Errorf("Serve = %v", err)
		}
	})
	return s
}

// rawGet sends a keep-alive GET on a new connection and reads the
// answer, leaving the connection open and idle.
func rawGet(t testing.TB, addr net.Addr, path string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return c, r
}

// closedByServer reports whether the server closed c, waiting for it up
// to a generous deadline.
func closedByServer(c net.Conn, r *bufio.Reader) bool {
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := r.ReadByte()
	return err != nil && !isTimeout(err)
}

// count returns how many connections are in state.
func (l *Listener) count(state http.ConnState) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for c := range l.conns {
		if c.state == state {
			n++
		}
	}
	return n
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// blocking answers "/block" once released, anything else at once.
type blocking struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/block" {
		b.entered <- struct{}{}
		<-b.release
	}
	io.WriteString(w, "ok")
}

func get(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func generous(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestListenerClosesIdleFirst: with every slot taken, a new client is
// served by closing the connection idle longest; a connection whose
// request is being answered keeps its slot.
func TestListenerClosesIdleFirst(t *testing.T) {
	b := &blocking{entered: make(chan struct{}), release: make(chan struct{})}
	s := startServer(t, b, Options{MaxConnections: 3}, 0)
	base := "http://" + s.Addr().String()
	busy := make(chan error, 1)
	go func() { busy <- get(generous(t), &http.Client{Transport: &http.Transport{}}, base+"/block") }()
	<-b.entered
	// A client may read its answer before the server marks the
	// connection idle: the order is the server's.
	older, olderR := rawGet(t, s.Addr(), "/")
	defer older.Close()
	eventually(t, "the older connection is idle", func() bool { return s.listener.count(http.StateIdle) == 1 })
	newer, newerR := rawGet(t, s.Addr(), "/")
	defer newer.Close()
	eventually(t, "both connections are idle", func() bool { return s.listener.count(http.StateIdle) == 2 })

	if err := get(generous(t), &http.Client{Transport: &http.Transport{}}, base+"/"); err != nil {
		t.Fatalf("a new client with every slot taken: %v", err)
	}
	if !closedByServer(older, olderR) {
		t.Error("the connection idle longest was not closed")
	}
	close(b.release)
	if err := <-busy; err != nil {
		t.Errorf("the busy connection was cut: %v", err)
	}
	// The newer idle connection kept its slot: it is still served.
	fmt.Fprintf(newer, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, err := http.ReadResponse(newerR, nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the newer idle connection: %v", err)
	}
}

// TestListenerClosesStalledNewConnection: with every slot taken by a
// connection that never sent its request, a new client is served once
// that one is past its grace, and it is closed.
func TestListenerClosesStalledNewConnection(t *testing.T) {
	s := startServer(t, &blocking{}, Options{MaxConnections: 1}, 50*time.Millisecond)
	stalled, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	io.WriteString(stalled, "GET / HTTP/1.1\r\nHo") // and nothing more
	if err := get(generous(t), &http.Client{Transport: &http.Transport{}}, "http://"+s.Addr().String()+"/"); err != nil {
		t.Fatalf("a new client with the slot held by a stalled one: %v", err)
	}
	if !closedByServer(stalled, bufio.NewReader(stalled)) {
		t.Error("the stalled connection was not closed")
	}
}

// TestListenerBusySlotsWait: a connection whose request is being answered
// is never closed to make room; the new client waits for it.
func TestListenerBusySlotsWait(t *testing.T) {
	b := &blocking{entered: make(chan struct{}), release: make(chan struct{})}
	s := startServer(t, b, Options{MaxConnections: 1}, 0)
	base := "http://" + s.Addr().String()
	var released atomic.Bool
	busy := make(chan error, 1)
	go func() { busy <- get(generous(t), &http.Client{Transport: &http.Transport{}}, base+"/block") }()
	<-b.entered
	waiting := make(chan error, 1)
	go func() {
		err := get(generous(t), &http.Client{Transport: &http.Transport{}}, base+"/")
		if err == nil && !released.Load() {
			err = fmt.Errorf("served while the only slot was busy")
		}
		waiting <- err
	}()
	// Give the waiting client every chance to be (wrongly) served first.
	time.Sleep(100 * time.Millisecond)
	released.Store(true)
	close(b.release)
	if err := <-busy; err != nil {
		t.Errorf("the busy request: %v", err)
	}
	if err := <-waiting; err != nil {
		t.Errorf("the waiting client: %v", err)
	}
	if n := s.listener.Held(); n > 1 {
		t.Errorf("%d connections hold slots, more than the 1 allowed", n)
	}
}

// TestListenerCloseEndsWaitingAccept: a shutdown with every slot busy
// does not wait for a slot.
func TestListenerCloseEndsWaitingAccept(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewListener(inner, 1)
	for range 2 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	l.ConnState(first, http.StateActive)
	accepted := make(chan error, 1)
	go func() { _, err := l.Accept(); accepted <- err }()
	l.Close()
	if err := <-accepted; err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Accept after Close = %v, want net.ErrClosed", err)
	}
}
