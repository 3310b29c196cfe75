package reference

import "sync"

// waiters wakes duplicates waiting for an attempt of this process to leave
// processing. A waiter subscribes before it reads the record, and the
// attempt notifies after it wrote the record, so a waiter that saw
// processing is always woken. Entries are reference counted and removed
// by the last waiter or by the notification, so nothing accumulates.
type waiters struct {
	mu sync.Mutex
	m  map[string]*waiter
}

type waiter struct {
	done chan struct{} // closed by notify
	refs int
}

func (ws *waiters) subscribe(id string) *waiter {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.m[id]
	if w == nil {
		w = &waiter{done: make(chan struct{})}
		ws.m[id] = w
	}
	w.refs++
	return w
}

func (ws *waiters) unsubscribe(id string, w *waiter) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w.refs--; w.refs == 0 && ws.m[id] == w {
		delete(ws.m, id)
	}
}

// notify wakes every waiter subscribed to id.
func (ws *waiters) notify(id string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w := ws.m[id]; w != nil {
		close(w.done)
		delete(ws.m, id)
	}
}
