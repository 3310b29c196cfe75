package server

import (
	"io"
	"sync"
	"time"
)

// LogFlushDelay is the longest a buffered log line waits to be written.
const LogFlushDelay = 100 * time.Millisecond

// logBufferSize is how many bytes of lines a LogBuffer gathers before it
// writes them without waiting: a few hundred access lines.
const logBufferSize = 64 << 10

// LogBuffer gathers log lines for one writer, so that a busy server
// writes its access log in a few large writes rather than one system call
// per request. A line waits at most LogFlushDelay: the first line written
// into an empty buffer arms one timer, so a busy server wakes once per
// delay, not once per request, and an idle one not at all. Lines written
// through Direct go out at once, after those buffered before them, so the
// log keeps its order. After Close every line goes out at once.
type LogBuffer struct {
	mu     sync.Mutex
	out    io.Writer
	buf    []byte
	armed  bool // the timer will flush buf
	closed bool
	delay  time.Duration // LogFlushDelay but in tests
	timer  *time.Timer
}

// NewLogBuffer returns an empty buffer in front of out.
func NewLogBuffer(out io.Writer) *LogBuffer { return newLogBuffer(out, LogFlushDelay) }

func newLogBuffer(out io.Writer, delay time.Duration) *LogBuffer {
	b := &LogBuffer{out: out, delay: delay}
	b.timer = time.AfterFunc(delay, func() { b.Flush() }) //nolint:errcheck // a later write reports out's failure no better
	b.timer.Stop()
	return b
}

// Write buffers p, which holds whole lines (a slog handler writes one
// record per call).
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.out.Write(p)
	}
	if len(b.buf)+len(p) > logBufferSize {
		if err := b.flush(); err != nil {
			return 0, err
		}
	}
	b.buf = append(b.buf, p...)
	if !b.armed {
		b.armed = true
		b.timer.Reset(b.delay)
	}
	return len(p), nil
}

// Flush writes the buffered lines.
func (b *LogBuffer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flush()
}

// Close writes the buffered lines and every later one at once.
func (b *LogBuffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.timer.Stop()
	return b.flush()
}

// Direct returns a writer whose lines go out at once, after the lines
// buffered before them.
func (b *LogBuffer) Direct() io.Writer { return directWriter{b} }

// flush writes the buffered lines; the caller holds b.mu.
func (b *LogBuffer) flush() error {
	b.armed = false
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.out.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}

type directWriter struct{ b *LogBuffer }

func (d directWriter) Write(p []byte) (int, error) {
	d.b.mu.Lock()
	defer d.b.mu.Unlock()
	if err := d.b.flush(); err != nil {
		return 0, err
	}
	return d.b.out.Write(p)
}
