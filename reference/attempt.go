package reference

import (
	"context"
	"errors"
	"sync"
	"time"
)

// attempt is one execution of the handler by the worker holding a
// record: it renews the lease while the handler runs and records how the
// attempt ended (spec 6.5).
type attempt struct {
	e     *Engine
	id    string
	token string
	reply *Reply // names the attempt in logs
	// ctx is the handler's context: the request's values, not cancelled
	// with the request, ended by the engine's base context or by a lost
	// lease.
	ctx      context.Context
	cancel   context.CancelCauseFunc
	stopBase func() bool
	// storeCtx carries the request's values to the store calls, which
	// must outlive the client.
	storeCtx context.Context

	mu      sync.Mutex
	ended   bool
	renewal *time.Timer
	// leaseEnd is the local estimate of when the lease lapses: a lease
	// from before the store call that granted or renewed it.
	leaseEnd time.Time
}

// storeCallContext returns the context of one store call of an attempt,
// bounded in time: a store that hangs must not outlast the lease it is
// meant to keep. A MemoryStore cannot hang, and a timer per call would be
// most of what recording an attempt costs it.
func (e *Engine) storeCallContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, inProcess := e.store.(*MemoryStore); inProcess {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, max(e.lease/3, 100*time.Millisecond))
}

// startAttempt starts the attempt holding token, whose record a Create
// issued at asked created, and its lease renewal.
func (e *Engine) startAttempt(ctx context.Context, id, token string, asked time.Time, reply *Reply) *attempt {
	detached := context.WithoutCancel(ctx)
	if b, ok := e.store.(AttemptBinder); ok {
		detached = b.BindAttempt(detached, id, token)
	}
	a := &attempt{e: e, id: id, token: token, reply: reply, storeCtx: detached, leaseEnd: asked.Add(e.lease)}
	a.ctx, a.cancel = context.WithCancelCause(detached)
	if e.base != nil {
		a.stopBase = context.AfterFunc(e.base, func() { a.cancel(context.Cause(e.base)) })
	}
	a.mu.Lock()
	a.renewal = time.AfterFunc(e.lease/3, a.renew)
	a.mu.Unlock()
	return a
}

// renew extends the lease and schedules the next renewal, until the
// attempt ends or loses its lease.
func (a *attempt) renew() {
	asked := time.Now()
	ctx, cancel := a.e.storeCallContext(a.storeCtx)
	err := a.e.store.Renew(ctx, a.id, a.token, a.e.lease)
	cancel()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended {
		return
	}
	switch {
	case err == nil:
		a.leaseEnd = asked.Add(a.e.lease)
	case errors.Is(err, ErrLeaseLost):
		// Another attempt owns the key now: whatever this handler still
		// does, it cannot record it, so tell it to stop.
		a.log("idempotency store: the attempt lost its lease; cancelling the handler", err)
		a.cancel(ErrLeaseLost)
		return
	default:
		a.log("idempotency store: renewing the lease failed; retrying", err)
	}
	a.renewal.Reset(a.e.lease / 3)
}

// end stops the renewal and records the end of the attempt: Finish with
// state and res, or Release when there is nothing to keep (state
// Processing: the handler exited without returning; a failure under
// on_failed "reexecute"). When the store fails, it retries in the
// background while the lease lasts, so the response is not held up. It
// wakes the local duplicates once the record is written, and returns the
// store's error when retrying cannot help.
func (a *attempt) end(state State, res Result) error {
	a.mu.Lock()
	a.ended = true
	a.renewal.Stop()
	leaseEnd := a.leaseEnd
	a.mu.Unlock()
	if a.stopBase != nil {
		a.stopBase()
	}
	a.cancel(nil)
	err := a.write(state, res)
	if retryable(err) {
		a.log("idempotency store: cannot record the end of the attempt; retrying while the lease lasts", err)
		go a.retry(state, res, leaseEnd)
		return nil
	}
	if err != nil {
		a.log("idempotency store: cannot record the end of the attempt", err)
	}
	a.e.waiters.notify(a.id)
	return err
}

// retryable reports whether writing the end of an attempt failed in a way
// that trying again may mend: not when another attempt holds the record,
// the record already ended, or the attempt's transaction is gone.
func retryable(err error) bool {
	return err != nil && !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrInvalidTransition) && !errors.Is(err, ErrUncommitted)
}

func (a *attempt) write(state State, res Result) error {
	ctx, cancel := a.e.storeCallContext(a.storeCtx)
	defer cancel()
	if state == Processing || state == Failed && a.e.reexecute {
		return a.e.store.Release(ctx, a.id, a.token)
	}
	return a.e.store.Finish(ctx, a.id, a.token, state, res, a.e.ttl)
}

// Backoff bounds of retrying to record the end of an attempt.
const (
	minEndRetry = 50 * time.Millisecond
	maxEndRetry = time.Second
)

func (a *attempt) retry(state State, res Result, leaseEnd time.Time) {
	defer a.e.waiters.notify(a.id)
	for wait := minEndRetry; ; wait = min(2*wait, maxEndRetry) {
		if time.Now().Add(wait).After(leaseEnd) {
			a.log("idempotency store: gave up recording the end of the attempt: its lease lapsed, so a duplicate may execute again", ErrLeaseLost)
			return
		}
		time.Sleep(wait)
		err := a.write(state, res)
		if err == nil {
			a.e.log.InfoContext(a.storeCtx, "idempotency store: recorded the end of the attempt after retrying", "operation", a.reply.Operation, "idempotency_key", a.reply.Key, "state", state)
			return
		}
		if !retryable(err) {
			a.log("idempotency store: cannot record the end of the attempt", err)
			return
		}
	}
}

func (a *attempt) log(msg string, err error) {
	a.e.log.ErrorContext(a.storeCtx, msg, "operation", a.reply.Operation, "idempotency_key", a.reply.Key, "error", err)
}
