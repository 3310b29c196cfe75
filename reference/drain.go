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
// end of each is settled: recorded in the store, or given up on.
type attemptSet struct {
	mu sync.Mutex
	m  map[*attempt]struct{}
}

func (s *attemptSet) add(a *attempt) {
	s.mu.Lock()
	s.m[a] = struct{}{}
	s.mu.Unlock()
}

func (s *attemptSet) remove(a *attempt) {
	s.mu.Lock()
	delete(s.m, a)
	s.mu.Unlock()
}

func (s *attemptSet) list() []*attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := make([]*attempt, 0, len(s.m))
	for a := range s.m {
		list = append(list, a)
	}
	return list
}

// Unrecorded names an attempt whose end Drain could not see recorded.
type Unrecorded struct {
	Operation string // operation_key
	Key       string // the idempotency key, bare form
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

// Drain waits until every attempt running when it is called has ended and
// its end is recorded in the store, or until ctx ends. Call it at
// shutdown once the server takes no more requests (and, when it cut the
// handlers by ending the base context, after that): the end of an attempt
// that the store refused is retried in the background, and a process
// that exits first leaves the record processing, so that the key runs
// again once the lease lapses. It returns nil when every end was
// recorded, else an *UnrecordedError naming the attempts.
func (e *Engine) Drain(ctx context.Context) error {
	var lost []Unrecorded
	for _, a := range e.attempts.list() {
		select {
		case <-a.settled:
		case <-ctx.Done():
		}
		select { // settled even if ctx ended at the same time
		case <-a.settled:
			if a.recorded {
				continue
			}
		default:
		}
		lost = append(lost, Unrecorded{Operation: a.reply.Operation, Key: a.reply.Key})
	}
	if len(lost) == 0 {
		return nil
	}
	slices.SortFunc(lost, func(x, y Unrecorded) int {
		return cmp.Or(strings.Compare(x.Operation, y.Operation), strings.Compare(x.Key, y.Key))
	})
	return &UnrecordedError{Attempts: lost}
}
