package server

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Listener accepts at most a fixed number of connections at once, so
// that a flood of clients cannot exhaust file descriptors or memory. When
// every slot is taken and another client arrives, it frees one for it
// rather than let the newcomer wait behind connections that do nothing:
//
//  1. the connection idle longest between requests (keep-alive) is closed;
//  2. else the one that has been sending its first request's header
//     longest, once that is at least NewConnGrace (a slow-header client,
//     or one that connected and sent nothing);
//  3. else, every slot being busy with a request, the newcomer waits until
//     a slot frees or the oldest header reader is past its grace.
//
// The states come from the http.Server the listener serves, which must
// call ConnState (New sets it up). Only a connection whose request is
// being read or answered (http.StateActive) is never closed to make room.
type Listener struct {
	net.Listener
	max    int
	grace  time.Duration
	now    func() time.Time
	freed  chan struct{} // a slot freed or became idle; buffered, one pending at most
	closed chan struct{}

	closeOnce sync.Once
	mu        sync.Mutex
	conns     map[*conn]struct{}
}

// NewConnGrace is how long a new connection may take to send its first
// request's header before Listener may close it to make room.
const NewConnGrace = 500 * time.Millisecond

// NewListener returns ln limited to n connections at once (at least 1).
func NewListener(ln net.Listener, n int) *Listener {
	return &Listener{
		Listener: ln, max: max(n, 1), grace: NewConnGrace, now: time.Now,
		freed: make(chan struct{}, 1), closed: make(chan struct{}), conns: map[*conn]struct{}{},
	}
}

// conn is an accepted connection holding a slot until it is closed.
type conn struct {
	net.Conn
	l         *Listener
	closeOnce sync.Once
	// Guarded by l.mu.
	state http.ConnState
	since time.Time // when it entered state
}

// Accept waits for a client, then for a slot for it (freeing one as the
// type's documentation says).
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &conn{Conn: c, l: l, state: http.StateNew}
	for {
		l.mu.Lock()
		now := l.now()
		if len(l.conns) < l.max {
			tc.since = now
			l.conns[tc] = struct{}{}
			l.mu.Unlock()
			return tc, nil
		}
		victim, wait := l.victim(now)
		l.mu.Unlock()
		if victim != nil {
			victim.Close()
			continue
		}
		if err := l.await(wait); err != nil {
			c.Close()
			return nil, err
		}
	}
}

// victim returns the connection to close to make room, or, when there is
// none yet, how long until the oldest header reader's grace ends (0 when
// there is no header reader). The caller holds l.mu.
func (l *Listener) victim(now time.Time) (*conn, time.Duration) {
	var idle, fresh *conn
	for c := range l.conns {
		switch c.state {
		case http.StateIdle:
			if idle == nil || c.since.Before(idle.since) {
				idle = c
			}
		case http.StateNew:
			if fresh == nil || c.since.Before(fresh.since) {
				fresh = c
			}
		}
	}
	switch {
	case idle != nil:
		return idle, 0
	case fresh == nil:
		return nil, 0
	}
	if waited := now.Sub(fresh.since); waited < l.grace {
		return nil, l.grace - waited
	}
	return fresh, 0
}

// await waits until a slot frees or becomes idle, wait has passed (when positive) or the
// listener is closed.
func (l *Listener) await(wait time.Duration) error {
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	// Waiting must end with the listener: http.Server's Shutdown waits
	// for Serve to return before it closes idle connections, which are
	// what would free a slot.
	select {
	case <-l.freed:
	case <-timeout:
	case <-l.closed:
		return net.ErrClosed
	}
	return nil
}

// ConnState records a connection's state; it is http.Server.ConnState.
func (l *Listener) ConnState(c net.Conn, state http.ConnState) {
	tc, ok := c.(*conn)
	if !ok || state == http.StateClosed || state == http.StateHijacked {
		return // a closed one is gone; a hijacked one is its hijacker's
	}
	l.mu.Lock()
	if _, held := l.conns[tc]; held {
		tc.state, tc.since = state, l.now()
	}
	l.mu.Unlock()
	if state == http.StateIdle {
		l.signal() // a slot a waiting client may take
	}
}

// signal wakes a client waiting for a slot, if any.
func (l *Listener) signal() {
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// Held returns how many connections hold a slot.
func (l *Listener) Held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Close stops accepting; connections already accepted stay open.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// Close closes the connection and frees its slot.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		c.l.signal()
	})
	return c.Conn.Close()
}
