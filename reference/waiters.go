package reference

import "sync"

// waiters wakes duplicates waiting for an attempt of this process to leave
// processing. A waiter subscribes before it reads the record, and the
// attempt notifies after it wrote the record, so a waiter that saw
// processing is always woken. An attempt of this process registers while
// it runs, so that a duplicate that saw its record processing, even
// before subscribing, needs no second read: the notification is still to
// come, and it carries the record the attempt wrote. Entries are removed
// by the notification, or by the last waiter when no attempt of this
// process runs, so nothing accumulates.
type waiters struct {
	mu sync.Mutex
	m  map[string]*waiter
}

type waiter struct {
	done chan struct{} // closed by notify
	refs int           // the waiters subscribed
	// token is that of the attempt of this process holding the record,
	// "" when none registered.
	token string
	// ended is the record the attempt wrote, set before done is closed;
	// its State is zero when the waiters must read the record themselves.
	ended Record
}

// running registers the attempt of this process holding the record under
// id with token, until it notifies.
func (ws *waiters) running(id, token string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.m[id]
	if w == nil {
		w = &waiter{done: make(chan struct{})}
		ws.m[id] = w
	}
	w.token = token
}

func (ws *waiters) subscribe(id string) *waiter {
	w, _ := ws.subscribeTo(id, "")
	return w
}

// subscribeTo subscribes to id and reports whether the attempt holding
// token runs in this process and has not notified yet.
func (ws *waiters) subscribeTo(id, token string) (w *waiter, running bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w = ws.m[id]
	if w == nil {
		w = &waiter{done: make(chan struct{})}
		ws.m[id] = w
	}
	w.refs++
	return w, token != "" && w.token == token
}

func (ws *waiters) unsubscribe(id string, w *waiter) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w.refs--; w.refs == 0 && w.token == "" && ws.m[id] == w {
		delete(ws.m, id)
	}
}

// notify wakes every waiter subscribed to id, handing them ended, the
// record just written (zero when they must read it).
func (ws *waiters) notify(id string, ended Record) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w := ws.m[id]; w != nil {
		w.ended = ended
		close(w.done)
		delete(ws.m, id)
	}
}
