package reference

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// attempt is one execution of the handler by the worker holding a
// record: it renews the lease while the handler runs and records how the
// attempt ended (docs/engine.md, Records, leases and fencing).
type attempt struct {
	e     *Engine
	id    string
	token string
	fp    string // the fingerprint of the request it runs
	reply *Reply // names the attempt in logs
	// ctx is the handler's context: the request's values, not cancelled
	// with the request, ended by the engine's base context or by a lost
	// lease.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// storeCtx carries the request's values to the store calls, which
	// must outlive the client.
	storeCtx context.Context

	// lapsed: the attempt learned that it lost its lease, and counted it.
	lapsed atomic.Bool

	mu      sync.Mutex
	ended   bool
	renewal *time.Timer
	// leaseEnd is the local estimate of when the lease lapses: a lease
	// from before the store call that granted or renewed it.
	leaseEnd time.Time

	// withToken is the request's context, detached from its
	// cancellation, carrying the token: a field, so that it costs no
	// allocation of its own.
	withToken tokenContext
}

// tokenContext is a context that carries an attempt token.
type tokenContext struct {
	context.Context
	token string
}

func (c *tokenContext) Value(key any) any {
	if key == (attemptTokenKey{}) {
		return c.token
	}
	return c.Context.Value(key)
}

// ErrLeaseLapsed is the cause of a handler's context ending because the
// engine could not renew the attempt's lease before it lapsed: the store
// did not answer. Another replica may now take the key over and execute
// it again, so the handler should stop, and fence its downstream writes
// with AttemptToken. It wraps ErrLeaseLost, the cause when another
// attempt is known to hold the key.
var ErrLeaseLapsed = fmt.Errorf("%w: the lease lapsed before the store answered a renewal", ErrLeaseLost)

// attemptTokenKey is the context key of the attempt token.
type attemptTokenKey struct{}

// AttemptToken returns the token of the attempt whose handler was given
// ctx (see Record.Token). It is unique to this execution of the key: a
// duplicate that takes the key over after a lapsed lease runs with
// another. A handler fences a downstream write with it by sending the key
// and the token, the downstream accepting one write per key and
// remembering the token that made it, so that a second execution learns
// of the first instead of repeating its effect.
func AttemptToken(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(attemptTokenKey{}).(string)
	return t, ok
}

// minStoreCall is the least time a store call of an attempt is given.
const minStoreCall = 100 * time.Millisecond

// storeCallContext returns the context of one store call of an attempt,
// bounded in time: a store that hangs must not outlast the lease it is
// meant to keep. A MemoryStore cannot hang, and a timer per call would be
// most of what recording an attempt costs it.
func (e *Engine) storeCallContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, inProcess := e.store.(*MemoryStore); inProcess {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, max(e.lease/3, minStoreCall))
}

// startAttempt starts the attempt holding token, whose record a Create
// issued at asked created, and its lease renewal.
func (e *Engine) startAttempt(ctx context.Context, id, token, fp string, asked time.Time, reply *Reply) *attempt {
	a := &attempt{e: e, id: id, token: token, fp: fp, reply: reply, leaseEnd: asked.Add(e.lease)}
	e.waiters.running(id, token)
	a.withToken = tokenContext{Context: context.WithoutCancel(ctx), token: token}
	var detached context.Context = &a.withToken
	if b, ok := e.store.(AttemptBinder); ok {
		detached = b.BindAttempt(detached, id, token)
	}
	a.storeCtx = detached
	a.ctx, a.cancel = context.WithCancelCause(detached)
	e.attempts.add(a)
	// The end of the base context cancels the attempts the set holds
	// (New), which from here on holds this one; one that ended before is
	// cancelled here.
	if e.base != nil && e.base.Err() != nil {
		a.cancel(context.Cause(e.base))
	}
	a.mu.Lock()
	a.renewal = time.AfterFunc(e.lease/3, a.renew)
	a.mu.Unlock()
	return a
}

// renewRetry divides the lease into how long a renewal may take and how
// soon one that failed is tried again: a tenth. A store that comes back
// is then renewed within two tenths (a call under way times out, the next
// is sent), so an outage shorter than the lease less a third (the
// interval of renewals) and two tenths, 47 % of it, keeps the lease,
// whether the store refuses or hangs meanwhile.
const renewRetry = 10

// renew extends the lease and schedules the next renewal, until the
// attempt ends or loses its lease. While the store fails, it tries again
// every tenth of the lease up to the moment the lease lapses, and then
// cancels the handler.
func (a *attempt) renew() {
	a.mu.Lock()
	leaseEnd := a.leaseEnd
	a.mu.Unlock()
	asked := time.Now()
	deadline := asked.Add(max(a.e.lease/renewRetry, minStoreCall))
	if leaseEnd.Before(deadline) {
		deadline = leaseEnd // an answer after it is too late to keep the lease
	}
	ctx, cancel := context.WithDeadline(a.storeCtx, deadline)
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
		a.log(slog.LevelError, "idempotency store: the attempt lost its lease; cancelling the handler", err)
		a.lapse()
		a.cancel(ErrLeaseLost)
		return
	case !time.Now().Before(a.leaseEnd):
		a.log(slog.LevelError, "idempotency store: the lease lapsed before it could be renewed, so a duplicate may execute again; cancelling the handler", err)
		a.lapse()
		a.cancel(fmt.Errorf("%w: %w", ErrLeaseLapsed, err))
		return
	default:
		a.log(slog.LevelWarn, "idempotency store: renewing the lease failed; retrying until it lapses", err)
		a.renewal.Reset(min(a.e.lease/renewRetry, time.Until(a.leaseEnd)))
		return
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
	a.cancel(nil)
	err := a.write(state, res)
	if retryable(err) {
		a.log(slog.LevelWarn, "idempotency store: cannot record the end of the attempt; retrying while the lease lasts", err)
		go a.retry(state, res, leaseEnd)
		return nil
	}
	var ended Record // what the local duplicates replay without reading it
	if errors.Is(err, ErrLeaseLost) {
		a.lapse()
	}
	if err != nil {
		a.log(slog.LevelError, "idempotency store: cannot record the end of the attempt", err)
	} else if !a.releases(state) {
		ended = Record{Key: a.reply.Key, Operation: a.reply.Operation, Fingerprint: a.fp, State: state, Token: a.token, Response: res.Response, Error: res.Error}
	}
	a.e.waiters.notify(a.id, ended)
	// Uncommitted: the store released the record instead.
	a.settle(err == nil || errors.Is(err, ErrUncommitted))
	return err
}

// settle tells Drain that the end of the attempt is recorded or given up.
func (a *attempt) settle(recorded bool) { a.e.attempts.settle(a, recorded) }

// retryable reports whether writing the end of an attempt failed in a way
// that trying again may mend: not when another attempt holds the record,
// the record already ended, or the attempt's transaction is gone.
func retryable(err error) bool {
	return err != nil && !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrInvalidTransition) && !errors.Is(err, ErrUncommitted)
}

// releases reports whether an attempt that ended in state leaves no
// record: it exited without a result, or failed under on_failed
// "reexecute".
func (a *attempt) releases(state State) bool {
	return state == Processing || state == Failed && a.e.reexecute
}

func (a *attempt) write(state State, res Result) error {
	ctx, cancel := a.e.storeCallContext(a.storeCtx)
	defer cancel()
	if a.releases(state) {
		return a.e.store.Release(ctx, a.id, a.token)
	}
	return a.e.store.Finish(ctx, a.id, a.token, state, res, a.e.ttl)
}

// Backoff bounds of retrying to record the end of an attempt.
const (
	minEndRetry = 50 * time.Millisecond
	maxEndRetry = time.Second
)

// retry writes the end of the attempt again until it is recorded or the
// lease lapses. A try that failed may have been carried out all the same
// (its reply was lost): the next then finds the record already ended by
// this token, which only this attempt holds, or, for a release, gone.
// Either is the end recorded.
func (a *attempt) retry(state State, res Result, leaseEnd time.Time) {
	defer a.e.waiters.notify(a.id, Record{})
	for wait := minEndRetry; ; wait = min(2*wait, maxEndRetry) {
		if time.Now().Add(wait).After(leaseEnd) {
			a.log(slog.LevelError, "idempotency store: gave up recording the end of the attempt: its lease lapsed, so a duplicate may execute again", ErrLeaseLost)
			a.lapse()
			a.settle(false)
			return
		}
		time.Sleep(wait)
		err := a.write(state, res)
		releasing := a.releases(state)
		if err == nil || !releasing && errors.Is(err, ErrInvalidTransition) || releasing && errors.Is(err, ErrLeaseLost) {
			a.e.log.InfoContext(a.storeCtx, "idempotency store: recorded the end of the attempt after retrying", "operation", a.reply.Operation, "idempotency_key", a.reply.Key, "state", state)
			a.settle(true)
			return
		}
		if !retryable(err) {
			if errors.Is(err, ErrLeaseLost) {
				a.lapse()
			}
			a.log(slog.LevelError, "idempotency store: cannot record the end of the attempt", err)
			a.settle(false)
			return
		}
	}
}

func (a *attempt) log(level slog.Level, msg string, err error) {
	a.e.log.Log(a.storeCtx, level, msg, "operation", a.reply.Operation, "idempotency_key", a.reply.Key, "error", err)
}

// lapse counts, once for the attempt, that it lost its lease: the one
// way, crashes aside, that its key may run again.
func (a *attempt) lapse() {
	if a.lapsed.CompareAndSwap(false, true) {
		a.e.leases.lapses.Add(1)
	}
}

// leaseCounts are what LeaseStats reports.
type leaseCounts struct{ lapses, takeovers atomic.Int64 }

// LeaseStats counts the leases an engine's attempts lost, and the
// attempts of other workers its requests took over.
type LeaseStats struct {
	// Lapses counts attempts that learned they lost their lease: its
	// renewal or the end of the attempt found the record gone or held by
	// another attempt, or the lease lapsed before the store answered.
	// Such an attempt's key may have run twice.
	Lapses int64 `json:"lease_lapses"`
	// Takeovers counts requests that executed after the processing
	// record they waited for went without finishing: its lease lapsed
	// (its worker died or stalled), or its worker released it.
	Takeovers int64 `json:"takeovers"`
}

// LeaseStats returns the engine's counts of lost leases and takeovers
// since it started, for a health report: a key runs twice only where
// one of them was counted (or the store lost a record).
func (e *Engine) LeaseStats() LeaseStats {
	return LeaseStats{Lapses: e.leases.lapses.Load(), Takeovers: e.leases.takeovers.Load()}
}

// tookOver counts and logs a request that executes after the processing
// record it waited for vanished.
func (e *Engine) tookOver(ctx context.Context, reply Reply) {
	e.leases.takeovers.Add(1)
	e.log.WarnContext(ctx, "idempotency: executing a key whose attempt in flight vanished without finishing (its lease lapsed, or it was released)", "operation", reply.Operation, "idempotency_key", reply.Key)
}
