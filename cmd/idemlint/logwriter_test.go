package main

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestCoalescingWriter: every line written from many goroutines arrives
// whole, each goroutine's in its order, the last ones once Close
// returns, and later writes after them.
func TestCoalescingWriter(t *testing.T) {
	var out syncBuffer
	c := newCoalescingWriter(&out)
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(c, "writer %d line %d\n", w, i)
			}
		})
	}
	wg.Wait()
	c.Close()
	fmt.Fprintf(c, "after close\n")
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != writers*lines+1 || got[len(got)-1] != "after close" {
		t.Fatalf("%d lines, the last %q; want %d, then \"after close\"", len(got), got[len(got)-1], writers*lines+1)
	}
	next := make([]int, writers)
	for _, line := range got[:len(got)-1] {
		var w, i int
		if _, err := fmt.Sscanf(line, "writer %d line %d", &w, &i); err != nil || w < 0 || w >= writers || i != next[w] {
			t.Fatalf("line %q out of place (writer %d expects line %d next)", line, w, next[min(max(w, 0), writers-1)])
		}
		next[w]++
	}
}

// TestCoalescingWriterBounded: a writer that does not keep up holds up
// Write once maxBufferedLog bytes wait, rather than buffering more.
func TestCoalescingWriterBounded(t *testing.T) {
	w := &gatedWriter{gate: make(chan struct{})}
	c := newCoalescingWriter(w)
	line := bytes.Repeat([]byte("x"), 1024)
	wrote := make(chan int)
	go func() {
		n := 0
		for range 4 * maxBufferedLog / len(line) {
			c.Write(line)
			n++
		}
		wrote <- n
	}()
	// The first write the goroutine passes on blocks on the gate, and
	// the buffer fills behind it up to the bound, where Write waits;
	// then the gate opens, and the goroutine writes all it holds at once.
	for full := false; !full; runtime.Gosched() {
		c.mu.Lock()
		full = len(c.buf) >= maxBufferedLog
		c.mu.Unlock()
	}
	close(w.gate)
	if n := <-wrote; n != 4*maxBufferedLog/len(line) {
		t.Fatalf("%d writes returned", n)
	}
	c.Close()
	if w.max > maxBufferedLog+len(line) {
		t.Errorf("one write of %d bytes: more than the %d the writer may hold", w.max, maxBufferedLog)
	}
	if w.total != 4*maxBufferedLog {
		t.Errorf("%d bytes written, want %d", w.total, 4*maxBufferedLog)
	}
}

// gatedWriter blocks until gate is closed, and records the sizes of
// the writes it gets.
type gatedWriter struct {
	gate       chan struct{}
	max, total int
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	<-g.gate
	g.max = max(g.max, len(p))
	g.total += len(p)
	return len(p), nil
}
