package reference

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/fileset"
)

// Engine enforces one adapter policy. It is safe for concurrent use.
type Engine struct {
	policy  *boundary.Policy
	store   Store
	now     func() time.Time
	log     *slog.Logger // errors
	access  *slog.Logger // one line per request, nil for none
	maxBody int64
	// createFirst: admit asks the store's Create at once, without a Get
	// first (see CreateFirstStore).
	createFirst bool

	maxBodyMemory int64
	bodyMemory    *semaphore.Weighted // bytes of request bodies held

	checks checks.Options // what the policy goes through (WithChecks)

	router         *router
	ops            []operation // parallel to router.routes
	keyHeaderName  string      // as declared, for messages
	keyHeader      string      // canonical
	keys           keyRules
	echoKey        bool
	tenantHeader   string // canonical; "" when tenant_id is not in the scope
	actorHeader    string // canonical; "" when actor_id is not in the scope
	fp             *fingerprinter
	reexecute      bool          // on_failed: reexecute
	replayedHeader string        // canonical; "" when not declared
	waitTimeout    time.Duration // 0 under inflight reject
	lease          time.Duration // idempotency_inflight.lease_ms
	ttl            time.Duration
	maxRecords     int             // of the default MemoryStore
	maxBytes       int64           // of the default MemoryStore
	tenantPercent  int             // of the default MemoryStore; 0 when tenant_id is not in the scope
	base           context.Context // ends the handlers' contexts; nil: never
	waiters        waiters
	attempts       attemptSet // until the end of each is settled, for Drain
	leases         leaseCounts

	// Answers prebuilt once, so refusing a request allocates nothing.
	keyProblems      [numKeyFaults]refusal
	mismatch         refusal
	unsupportedMedia refusal
	inflightReject   refusal
	inflightTimeout  refusal
	tooLarge         refusal
	unreadable       refusal
	noBodyMemory     refusal
	storeDown        refusal
	storeFull        refusal
	tenantFull       refusal
	notCommitted     refusal
	panicked         Response // the failure recorded for a panic
	handlerErr       Response // the failure recorded for a Handler error
}

// DefaultMaxBodyBytes bounds the request body the engine reads to
// fingerprint, unless WithMaxBodyBytes says otherwise.
const DefaultMaxBodyBytes = 1 << 20

// Option configures an Engine.
type Option func(*Engine)

// Options given nil (or, for WithMaxBodyBytes, a size below 1) keep the
// default.

// WithStore makes the engine keep its records in s instead of a new
// MemoryStore.
func WithStore(s Store) Option { return func(e *Engine) { e.store = s } }

// WithClock sets the clock of the default MemoryStore, which stamps
// records and decides leases and expiry. Waiting for an inflight attempt
// and renewing a lease always use real time.
func WithClock(now func() time.Time) Option {
	return func(e *Engine) {
		if now != nil {
			e.now = now
		}
	}
}

// WithBaseContext makes the handlers' contexts end when ctx ends, at
// shutdown. A handler's context is otherwise never cancelled: a client
// that goes away must not turn the attempt into a stored failure. It also
// ends, with cause ErrLeaseLost, when another attempt took the key over,
// or ErrLeaseLapsed, when the lease lapsed before the store answered. An
// attempt whose context ended so and that then fails (an error, a panic,
// a 5xx) is released, not stored as a failure: the client did not cause
// it, and a retry executes it again.
func WithBaseContext(ctx context.Context) Option { return func(e *Engine) { e.base = ctx } }

// WithChecks makes the policy go through the checks of a run of opts (its
// rules, limits and JSON Schema stage) instead of the core rules with the
// default limits: idemlint gives its own, so that the engine accepts a
// policy whose suppressions name any of its rules, and words a schema
// violation, as "idemlint check" does.
func WithChecks(opts checks.Options) Option { return func(e *Engine) { e.checks = opts } }

// WithLogger sets where the engine reports handler panics and errors,
// store failures and, at New, the policy's warnings. Default:
// slog.Default().
func WithLogger(l *slog.Logger) Option { return func(e *Engine) { e.log = cmp.Or(l, e.log) } }

// WithAccessLog makes the middleware log one Info line per request:
// method, path, status, operation, idempotency_key, outcome, replayed and
// duration. Default: none.
func WithAccessLog(l *slog.Logger) Option { return func(e *Engine) { e.access = l } }

// WithMaxBodyBytes bounds the request body the engine reads; a larger one
// is answered 413 payload_too_large. Default: DefaultMaxBodyBytes.
func WithMaxBodyBytes(n int64) Option {
	return func(e *Engine) {
		if n > 0 {
			e.maxBody = n
		}
	}
}

// Load reads the policy file at path, as "idemlint check" reads files, and
// returns its engine; see New.
func Load(path string, opts ...Option) (*Engine, error) {
	src, err := fileset.Read(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return New(path, src, opts...)
}

// New returns the engine for the policy document src (read from path,
// which names it in findings): an adapter document, or a
// gateway_to_adapter document with an embedded adapter policy. The
// document goes through every per-document check first (CheckPolicy,
// strict); any error finding refuses it with an *InvalidPolicyError.
func New(path string, src []byte, opts ...Option) (*Engine, error) {
	e, findings, err := NewWithFindings(path, src, opts...)
	if err != nil {
		return nil, err
	}
	for _, f := range findings {
		e.log.Warn("policy warning", "finding", f.String())
	}
	return e, nil
}

// NewWithFindings is New for a caller that shows the policy's findings
// itself ("conform --reference" prints them as notes): it returns them,
// warnings only, instead of logging them.
func NewWithFindings(path string, src []byte, opts ...Option) (*Engine, []checks.Finding, error) {
	e := &Engine{now: time.Now, log: slog.Default(), maxBody: DefaultMaxBodyBytes, maxBodyMemory: DefaultMaxBodyMemory, waiters: waiters{m: map[string]*waiter{}}, attempts: attemptSet{m: map[*attempt]struct{}{}},
		checks: checks.DefaultOptions()}
	for _, o := range opts {
		o(e)
	}
	doc, findings, err := CheckPolicy(path, src, true, e.checks)
	if err != nil {
		return nil, nil, err
	}
	e.bodyMemory = newBodyMemory(e.maxBodyMemory, e.maxBody)
	if e.base != nil {
		// One callback for every attempt rather than one each: see
		// startAttempt.
		context.AfterFunc(e.base, func() { e.attempts.cancel(context.Cause(e.base)) })
	}
	e.configure(doc)
	if e.store == nil {
		e.store = NewMemoryStore(MemoryOptions{Clock: e.now, MaxRecords: e.maxRecords, MaxBytes: e.maxBytes, TenantPercent: e.tenantPercent})
	}
	if cf, ok := e.store.(CreateFirstStore); ok {
		e.createFirst = cf.CreateFirst()
	}
	return e, findings, nil
}

// MaxWait returns how long a request may wait for an attempt in flight
// (wait_timeout_ms; 0 under inflight reject), for servers that size
// their write timeouts.
func (e *Engine) MaxWait() time.Duration { return e.waitTimeout }

// Policy returns the policy the engine enforces.
func (e *Engine) Policy() *boundary.Policy { return e.policy }

// Request is what the engine reads from an HTTP request.
type Request struct {
	Method   string
	Path     string      // the decoded URL path, as net/url's URL.Path
	RawQuery string      // without the '?'
	Header   http.Header // keys in canonical form, as net/http provides them
	Body     []byte
}

// Handler executes an operation once. A returned error, a panic or a
// status of 500 or more fails the attempt; any other response completes
// it. The Response must not be modified afterwards: it is stored.
type Handler func(ctx context.Context) (Response, error)

// Outcome says what the engine did with a request.
type Outcome uint8

// Outcomes.
const (
	Bypassed Outcome = iota // not subject to idempotency; the caller serves it
	Executed                // the handler ran; the response is its answer
	Replayed                // a duplicate of a finished attempt; the response is stored
	Refused                 // a problem response: bad key, mismatch, inflight, bad payload
)

func (o Outcome) String() string {
	return [...]string{"bypassed", "executed", "replayed", "refused"}[o]
}

// Reply is the engine's answer to one request.
type Reply struct {
	Response  // nothing when Bypassed
	Outcome   Outcome
	Operation string // operation_key, "" when no operation matched
	Key       string // the idempotency key, bare form; "" without a valid one
	ErrorCode string // error_code of a refusal

	e    *Engine
	echo []string // the key header's values as received, to echo back
}

// Write sends the reply: the response, plus the key header when the
// policy echoes it and the replayed header on a replay. A replay shares
// the stored header values with w.Header(): replace them (Set), never
// modify them in place. A Bypassed reply has nothing to send.
func (r *Reply) Write(w http.ResponseWriter) {
	h := w.Header()
	if r.echo != nil {
		h[r.e.keyHeader] = r.echo
	}
	if r.Outcome == Replayed && r.e.replayedHeader != "" {
		h[r.e.replayedHeader] = replayedValue
	}
	writeResponse(w, r.Response)
}

var replayedValue = []string{"true"}

// Handle runs one request through the engine. A request that is not
// subject to idempotency is answered Bypassed and run is not called;
// otherwise run is called at most once, and not at all on a replay or a
// refusal.
//
// A request is subject to idempotency when it matches a declared
// operation by method and path and either the policy requires the key for
// that operation, or the operation is state-changing and the request
// carries the key anyway (the client asked for protection; a malformed
// key then gets on_missing). A read-only operation outside require_key is
// never deduplicated: replaying a read would serve stale data.
func (e *Engine) Handle(ctx context.Context, req *Request, run Handler) Reply {
	op, idempotent := e.route(req.Method, req.Path, req.Header)
	if !idempotent {
		return bypassed(op)
	}
	return e.handle(ctx, op, req, run)
}

// route returns the declared operation a request is for (nil when none)
// and whether the request is subject to idempotency.
func (e *Engine) route(method, path string, h http.Header) (*operation, bool) {
	i := e.router.match(method, path)
	if i < 0 {
		return nil, false
	}
	op := &e.ops[i]
	return op, op.requiresKey || op.stateChanging && len(h[e.keyHeader]) > 0
}

// bypassed is the reply to a request not subject to idempotency, for an
// operation or none.
func bypassed(op *operation) Reply {
	r := Reply{Outcome: Bypassed}
	if op != nil {
		r.Operation = op.key
	}
	return r
}

func (e *Engine) handle(ctx context.Context, op *operation, req *Request, run Handler) Reply {
	reply, a := e.admit(ctx, op, req)
	if a == nil {
		return reply
	}
	return e.execute(a, run)
}

// admit decides what becomes of a request: the reply to a refusal or a
// replay, or the attempt this request is to execute. The handler runs
// after admit returned, so that its large frame is not on the stack
// beneath the handler's.
func (e *Engine) admit(ctx context.Context, op *operation, req *Request) (Reply, *attempt) {
	reply := Reply{Operation: op.key, e: e}
	key, fault := e.keys.parseKey(req.Header[e.keyHeader])
	if fault != keyOK {
		return reply.refuse(e.keyProblems[fault]), nil
	}
	reply.Key = key
	if e.echoKey {
		reply.echo = req.Header[e.keyHeader]
	}
	if !e.fp.accepts(req) {
		return reply.refuse(e.unsupportedMedia), nil
	}
	id := e.identity(op, req.Header, key)
	var (
		live  Record
		found bool
		err   error
	)
	if !e.createFirst {
		if live, found, err = e.store.Get(ctx, id); err != nil {
			return e.storeFailed(ctx, reply, "get", err), nil
		}
	}
	// A retry usually resends the very inputs of the live record: then it
	// has the record's fingerprint, and is not canonicalised again.
	raw := e.fp.rawDigest(req)
	fp := live.Fingerprint
	if !found || live.RawDigest != raw {
		if fp, err = e.fp.fingerprint(req); err != nil {
			return reply.refuse(newRefusal(http.StatusBadRequest, CodeNotCanonicalizable, "the request cannot be fingerprinted: "+err.Error())), nil
		}
	}

	var deadline waitDeadline
	defer deadline.stop()
	// vanished: the processing record this request waited for went
	// without finishing; executing now takes its key over.
	vanished := false
	for {
		if !found {
			var created bool
			asked := time.Now()
			live, created, err = e.store.Create(ctx, id, Record{Key: key, Operation: op.key, Fingerprint: fp, RawDigest: raw, Tenant: e.tenant(req.Header)}, e.lease)
			switch {
			case errors.Is(err, ErrFull):
				return reply.refuse(e.fullRefusal(err)), nil
			case err != nil:
				return e.storeFailed(ctx, reply, "create", err), nil
			case created:
				if vanished {
					e.tookOver(ctx, reply)
				}
				// A copy, so that only an execution puts a Reply on the
				// heap, not every replay.
				attemptReply := reply
				return Reply{}, e.startAttempt(ctx, id, live.Token, fp, asked, &attemptReply)
			}
		}
		switch {
		case live.Fingerprint != fp:
			return reply.refuse(e.mismatch), nil
		case live.State != Processing:
			// Under reexecute a failed attempt releases its record, so a
			// failed record found here is replayed either way.
			reply.Outcome, reply.Response = Replayed, live.Response
			return reply, nil
		case e.waitTimeout == 0: // inflight reject
			return reply.refuse(e.inflightReject), nil
		}
		var timedOut bool
		live, found, timedOut, err = e.await(ctx, id, fp, live, deadline.after(e.waitTimeout))
		switch {
		case err != nil:
			return e.storeFailed(ctx, reply, "get", err), nil
		case timedOut:
			return reply.refuse(e.inflightTimeout), nil
		}
		vanished = !found
	}
}

// storeFailed logs a failed store call and refuses the request: without
// a record the handler cannot run at most once.
func (e *Engine) storeFailed(ctx context.Context, reply Reply, call string, err error) Reply {
	e.log.ErrorContext(ctx, "idempotency store: "+call+" failed", "operation", reply.Operation, "idempotency_key", reply.Key, "error", err)
	return reply.refuse(e.storeDown)
}

// fullRefusal is the store-full answer, or the tenant-full one, with
// Retry-After from err.
func (e *Engine) fullRefusal(err error) refusal {
	f, after := e.storeFull, time.Second
	var fe *FullError
	if errors.As(err, &fe) {
		after = max(fe.RetryAfter, after)
		if fe.Tenant {
			f = e.tenantFull
		}
	}
	return retryAfter(f, after)
}

// retryAfter returns f with Retry-After: after, in whole seconds, rounded
// up.
func retryAfter(f refusal, after time.Duration) refusal {
	h := maps.Clone(f.Header)
	h["Retry-After"] = []string{strconv.FormatInt(int64((after+time.Second-1)/time.Second), 10)}
	f.Header = h
	return f
}

func (r Reply) refuse(f refusal) Reply {
	r.Outcome, r.Response, r.ErrorCode = Refused, f.Response, f.code
	return r
}

// identity encodes the record identity of a request: the scope members
// fixed by the operation, then tenant and actor when scoped, then the key.
func (e *Engine) identity(op *operation, h http.Header, key string) string {
	var buf [256]byte
	b := append(buf[:0], op.idPrefix...)
	if e.tenantHeader != "" {
		b = appendField(b, e.tenant(h))
	}
	if e.actorHeader != "" {
		v, _ := headerValue(h, e.actorHeader)
		b = appendField(b, v)
	}
	return string(appendField(b, key))
}

// tenant returns the request's tenant_id, "" when the scope does not name
// it.
func (e *Engine) tenant(h http.Header) string {
	if e.tenantHeader == "" {
		return ""
	}
	v, _ := headerValue(h, e.tenantHeader)
	return v
}

// execute runs the attempt whose record this request created (holding
// token), records how it ended, and wakes its duplicates.
func (e *Engine) execute(a *attempt, run Handler) Reply {
	reply := *a.reply
	returned := false
	defer func() {
		if !returned { // runtime.Goexit: no result to keep, so free the key
			a.end(Processing, Result{})
		}
	}()
	resp, cause, abort := e.run(a.ctx, run, a.reply)
	returned = true
	state := Completed
	if cause == "" && resp.Status >= 500 {
		cause = "handler answered " + http.StatusText(resp.Status)
	}
	if cause != "" {
		state = Failed
		if a.ctx.Err() != nil {
			state = Processing // cut by shutdown or a lost lease: release the key
		}
	}
	err := a.end(state, Result{Response: storable(resp), Error: cause})
	if abort != nil {
		panic(abort) // the handler asked net/http to abort the response
	}
	if errors.Is(err, ErrUncommitted) {
		return reply.refuse(e.notCommitted)
	}
	reply.Outcome, reply.Response = Executed, resp
	return reply
}

// run calls the handler, turning an error or a panic into a 500 problem
// and its cause. http.ErrAbortHandler is returned as abort, to be raised
// again once the record is written.
func (e *Engine) run(ctx context.Context, run Handler, reply *Reply) (resp Response, cause string, abort any) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		resp, cause = e.panicked, fmt.Sprint("panic: ", v)
		if v == http.ErrAbortHandler {
			abort = v
			return
		}
		e.log.ErrorContext(ctx, "handler panic", "operation", reply.Operation, "idempotency_key", reply.Key, "panic", v, "stack", string(debug.Stack()))
	}()
	resp, err := run(ctx)
	if err != nil {
		e.log.ErrorContext(ctx, "handler error", "operation", reply.Operation, "idempotency_key", reply.Key, "error", err)
		return e.handlerErr, "error: " + err.Error(), nil
	}
	if resp.Status == 0 {
		resp.Status = http.StatusOK
	}
	return resp, "", nil
}

// waitDeadline is the one deadline of all the waits of a request, started
// by the first.
type waitDeadline struct{ t *time.Timer }

func (d *waitDeadline) after(timeout time.Duration) <-chan time.Time {
	if d.t == nil {
		d.t = time.NewTimer(timeout)
	}
	return d.t.C
}

func (d *waitDeadline) stop() {
	if d.t != nil {
		d.t.Stop()
	}
}

// Polling bounds for a record another process (or engine) is running,
// which no local notification announces.
const (
	minPoll = 5 * time.Millisecond
	maxPoll = 200 * time.Millisecond
)

// await blocks until live, the processing record under id with
// fingerprint fp, may have changed: a local notification, or a poll
// showing it finished, vanished (its lease lapsed, or it was released) or
// was replaced. It returns the record it then found, or reports that
// deadline fired first. While an attempt of this process holds live it
// reads nothing: the attempt's notification is still to come, and brings
// the record the attempt wrote.
func (e *Engine) await(ctx context.Context, id, fp string, live Record, deadline <-chan time.Time) (rec Record, found, timedOut bool, err error) {
	w, local := e.waiters.subscribeTo(id, live.Token)
	defer func() { e.waiters.unsubscribe(id, w) }()
	interval := minPoll
	poll := time.NewTimer(interval)
	defer poll.Stop()
	rec, found = live, true
	for {
		if !local {
			rec, found, err = e.store.Get(ctx, id)
			if err != nil || !found || rec.State != Processing || rec.Fingerprint != fp {
				return rec, found, false, err
			}
		}
		local = false
		select {
		case <-w.done:
			if w.ended.State != 0 && w.ended.Token == rec.Token {
				return w.ended, true, false, nil
			}
			// Look again, and listen for the next attempt.
			e.waiters.unsubscribe(id, w)
			w = e.waiters.subscribe(id)
		case <-deadline:
			return rec, found, true, nil
		case <-ctx.Done():
			return rec, found, true, nil // the client is gone; the answer goes nowhere
		case <-poll.C:
			interval = min(2*interval, maxPoll)
			poll.Reset(interval)
		}
	}
}
