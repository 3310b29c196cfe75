package main

import (
	"io"
	"sync"
)

// maxBufferedLog bounds what a coalescingWriter holds: past it, Write
// waits for the writer to catch up, as it would have waited for w.
const maxBufferedLog = 1 << 20

// coalescingWriter passes what it is given to w, in order, from a
// goroutine of its own that writes whatever gathered meanwhile in one
// call: under load one write(2) carries the log lines of many requests
// instead of one each, and a request does not wait for w. Close writes
// what is left and passes later writes straight to w.
type coalescingWriter struct {
	w    io.Writer
	done chan struct{} // closed when the goroutine has written everything

	mu      sync.Mutex
	buf     []byte
	closed  bool
	wake    chan struct{} // buffered 1: the goroutine has something to write
	drained *sync.Cond    // buf was taken
}

func newCoalescingWriter(w io.Writer) *coalescingWriter {
	c := &coalescingWriter{w: w, done: make(chan struct{}), wake: make(chan struct{}, 1)}
	c.drained = sync.NewCond(&c.mu)
	go c.run()
	return c
}

func (c *coalescingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	for len(c.buf) >= maxBufferedLog && !c.closed {
		c.drained.Wait()
	}
	if c.closed {
		c.mu.Unlock()
		<-c.done // after what was buffered
		return c.w.Write(p)
	}
	c.buf = append(c.buf, p...)
	select {
	case c.wake <- struct{}{}:
	default: // the goroutine is woken already
	}
	c.mu.Unlock()
	return len(p), nil
}

func (c *coalescingWriter) run() {
	defer close(c.done)
	var out []byte
	for range c.wake {
		c.mu.Lock()
		out, c.buf = c.buf, out[:0]
		c.drained.Broadcast()
		c.mu.Unlock()
		if len(out) > 0 {
			_, _ = c.w.Write(out) // as slog's handlers do: nowhere to report a failure
		}
	}
	// Close closed wake: what is left, once.
	c.mu.Lock()
	out = c.buf
	c.mu.Unlock()
	if len(out) > 0 {
		_, _ = c.w.Write(out)
	}
}

// Close writes what is buffered and returns once it is written.
func (c *coalescingWriter) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	close(c.wake)
	c.drained.Broadcast()
	c.mu.Unlock()
	<-c.done
}
