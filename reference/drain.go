package reference

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// attemptSet holds the attempts of an engine from their start until the
// end of each is settled: recorded in the store, or given up on. It
// costs an attempt no allocation of its own.
type attemptSet struct {
	mu sync.Mutex
	m  map[*attempt]struct{}
	// Once Drain began: the attempts settled unrecorded since, and the
	// channel closed when none is left.
	draining bool
	lost     []Unrecorded
	empty    chan struct{}
}

func (s *attemptSet) add(a *attempt) {
	s.mu.Lock()
	s.m[a] = struct{}{}
	s.mu.Unlock()
}

// cancel cancels the handlers of the attempts s holds with cause.
func (s *attemptSet) cancel(cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for a := range s.m {
		a.cancel(cause)
	}
}

// settle removes a, whose end was recorded or given up on.
func (s *attemptSet) settle(a *attempt, recorded bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, a)
	if !s.draining {
		return
	}
	if !recorded {
		s.lost = append(s.lost, a.unrecorded())
	}
	if len(s.m) == 0 {
		s.closeEmpty()
	}
}

// closeEmpty closes s.empty unless it is closed; s.mu is held.
func (s *attemptSet) closeEmpty() {
	select {
	case <-s.empty:
	default:
		close(s.empty)
	}
}

// Unrecorded names an attempt whose end Drain could not see recorded.
type Unrecorded struct {
	Operation string // operation_key
	Key       string // the idempotency key, bare form
}

func (a *attempt) unrecorded() Unrecorded {
	return Unrecorded{Operation: a.reply.Operation, Key: a.reply.Key}
}

// UnrecordedError is Drain's answer when the end of some attempts was
// not recorded: their records may stay processing until their leases
// lapse, and a duplicate then executes them again.
type UnrecordedError struct {
	Attempts []Unrecorded // sorted by operation, then key
}

func (e *UnrecordedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the end of %d attempt(s) could not be recorded, so each may run again once its lease lapses:", len(e.Attempts))
	for _, a := range e.Attempts {
		fmt.Fprintf(&b, " %s %q;", a.Operation, a.Key)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Drain waits until every attempt has ended and its end is recorded in
// the store, or until ctx ends. Call it once, at shutdown, when the
// server takes no more requests (and, when it cut the handlers by ending
// the base context, after that): the end of an attempt that the store
// refused is retried in the background, and a process that exits first
// leaves the record processing, so that the key runs again once the lease
// lapses. It returns nil when every end was recorded, else an
// *UnrecordedError naming the attempts: those still unrecorded when ctx
// ended, and those given up on while Drain waited.
func (e *Engine) Drain(ctx context.Context) error {
	s := &e.attempts
	s.mu.Lock()
	if !s.draining {
		s.draining, s.empty = true, make(chan struct{})
		if len(s.m) == 0 {
			s.closeEmpty()
		}
	}
	empty := s.empty
	s.mu.Unlock()

	select {
	case <-empty:
	case <-ctx.Done():
	}
	s.mu.Lock()
	lost := slices.Clone(s.lost)
	for a := range s.m {
		lost = append(lost, a.unrecorded())
	}
	s.mu.Unlock()
	if len(lost) == 0 {
		return nil
	}
	slices.SortFunc(lost, func(x, y Unrecorded) int {
		return cmp.Or(strings.Compare(x.Operation, y.Operation), strings.Compare(x.Key, y.Key))
	})
	return &UnrecordedError{Attempts: lost}
}
