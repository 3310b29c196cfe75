package reference

import (
	"context"
	"errors"
	"math"
	"time"

	"golang.org/x/sync/semaphore"
)

// DefaultMaxBodyMemory bounds the memory of the request bodies Middleware
// holds at once, unless WithMaxBodyMemory says otherwise.
const DefaultMaxBodyMemory = 64 << 20

// bodyFirstChunk is the body memory a request takes before it read a
// byte of its body. A request waits for the rest of its body's memory
// while holding this much: at the default body memory, a thousand
// requests waiting at once would be needed to leave none of them room,
// and even they would only wait bodyMemoryWait.
const bodyFirstChunk = 16 << 10

// bodyMemoryWait is how long a request waits for body memory before it
// is answered 503: long enough for the bodies ahead of it to be served,
// short enough that a flood is refused while the clients still listen.
const bodyMemoryWait = time.Second

// WithMaxBodyMemory bounds the memory of the request bodies Middleware
// reads and holds at once, all requests together, so that concurrency
// times the largest body cannot exhaust memory. A request takes its
// share before reading its body: its Content-Length, or, when the length
// is unknown, the most a body may be (WithMaxBodyBytes), trimmed to what
// it was once read; it gives it back when the request ends. It takes it
// in two steps, bodyFirstChunk before reading and the rest once that much
// arrived, so that a client announcing a large body and sending it slowly
// (or never) holds little: many such clients cannot take every other
// request's room. A request that finds no room within a second is
// answered 503 request_body_memory_exhausted with Retry-After. The bound
// is raised to one largest body if lower. Default: DefaultMaxBodyMemory.
// Handle reads no body, so it is not bound by it.
func WithMaxBodyMemory(n int64) Option {
	return func(e *Engine) {
		if n > 0 {
			e.maxBodyMemory = n
		}
	}
}

// newBodyMemory returns the semaphore of an engine's body memory, in
// bytes: at least one largest body and the byte beyond it that proves a
// body too large.
func newBodyMemory(maxMemory, maxBody int64) *semaphore.Weighted {
	return semaphore.NewWeighted(max(maxMemory, min(maxBody, math.MaxInt64-1)+1))
}

// bodyShare is the part of the engine's body memory one request holds.
type bodyShare struct {
	memory *semaphore.Weighted
	held   int64
}

var errNoBodyMemory = errors.New("no memory left for the request body")

// take makes the request hold n bytes in all, waiting for room for what
// it lacks at most bodyMemoryWait, and less if ctx ends first. A request
// waits holding at most bodyFirstChunk (see readBody): one that waited for
// more while holding more could starve the others, and be starved by
// them, until every one times out.
func (s *bodyShare) take(ctx context.Context, n int64) error {
	more := n - s.held
	if more <= 0 {
		return nil
	}
	if !s.memory.TryAcquire(more) {
		ctx, cancel := context.WithTimeout(ctx, bodyMemoryWait)
		err := s.memory.Acquire(ctx, more)
		cancel()
		if err != nil {
			return errNoBodyMemory
		}
	}
	s.held = n
	return nil
}

// keep gives back what the request holds beyond n bytes.
func (s *bodyShare) keep(n int64) {
	if n < s.held {
		s.memory.Release(s.held - n)
		s.held = n
	}
}

// release gives back all the request holds.
func (s *bodyShare) release() { s.keep(0) }
