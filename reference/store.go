package reference

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"
)

// State is the execution state of an idempotency record. The service model
// knows exactly three; the zero value is none of them.
type State uint8

// The three states of the service model.
const (
	Processing State = iota + 1 // the handler is running; duplicates wait or are rejected
	Completed                   // the handler answered below 500; duplicates replay it
	Failed                      // the handler panicked, erred or answered 5xx
)

func (s State) String() string {
	switch s {
	case Processing:
		return "processing"
	case Completed:
		return "completed"
	case Failed:
		return "failed"
	}
	return "invalid"
}

// CanBecome reports whether the service model allows the transition from s
// to to. Only processing -> completed and processing -> failed exist: a
// record that left processing is terminal and replay-only.
func (s State) CanBecome(to State) bool {
	return s == Processing && (to == Completed || to == Failed)
}

// Response is an HTTP response as the engine stores and replays it.
// Responses held in records are shared, not copied: nobody may modify
// their Header or Body.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Record is one idempotency record: exactly one logical execution attempt
// (docs/engine.md, Records, leases and fencing). Every time in it comes from the store's
// clock, never the caller's, so replicas with skewed clocks agree.
type Record struct {
	Key         string // the idempotency key, bare form
	Operation   string // operation_key
	Fingerprint string // "<algorithm>:<hex digest>" of the request payload
	// RawDigest is the SHA-256 of the fingerprint inputs exactly as sent.
	// A retry usually resends the very same bytes; when its raw digest
	// equals the record's, so does its fingerprint, and the engine skips
	// canonicalisation, most of the cost of a replay.
	RawDigest [sha256.Size]byte
	// Tenant is the request's tenant_id when the scope names it. It is
	// already part of the identity; a store that bounds each tenant's
	// share (MemoryOptions.TenantPercent) counts by it, others need not keep
	// it.
	Tenant string
	State  State
	// Token is the attempt token the store drew at Create (see
	// NewToken): Renew, Finish and Release need it, so a worker whose
	// attempt was taken over can never touch the new attempt's record.
	Token     string
	Response  Response // the answer of a finished attempt, replayed to duplicates
	Error     string   // why a failed attempt failed
	CreatedAt time.Time
	UpdatedAt time.Time
	// LeaseUntil is when a processing record stops holding its key unless
	// renewed: from then on it is absent, and the next Create takes the
	// key over with a new token.
	LeaseUntil time.Time
	// ExpiresAt ends a finished record's life, ttl after it finished: from
	// then on the record is absent and the identity starts afresh. Zero
	// while processing: a record with a live lease never expires.
	ExpiresAt time.Time
}

// Live reports whether the record holds its key at now: a processing
// record while its lease lasts, a finished one until it expires.
func (r *Record) Live(now time.Time) bool {
	if r.State == Processing {
		return now.Before(r.LeaseUntil)
	}
	return now.Before(r.ExpiresAt)
}

// Result is how an attempt ended.
type Result struct {
	Response Response // what the attempt answered; replayed to duplicates
	Error    string   // for a failed attempt, why
}

// FinishEncoding checks that a Store may finish a processing record as
// to, and returns the stored response's header as JSON (nil for none):
// what every store that keeps records outside the process does first.
// The JSON may be shared with other callers: nobody may modify it.
func FinishEncoding(to State, res Result) (header []byte, err error) {
	if !Processing.CanBecome(to) {
		return nil, fmt.Errorf("%w: processing -> %s", ErrInvalidTransition, to)
	}
	h := res.Response.Header
	if len(h) == 0 {
		return nil, nil
	}
	// A service answers most requests with the same header: the last
	// one encoded usually serves again, without json.Marshal's cost.
	if last := lastHeaderJSON.Load(); last != nil && sameHeader(last.header, h) {
		return last.json, nil
	}
	header, err = json.Marshal(h)
	if err == nil {
		lastHeaderJSON.Store(&headerJSON{header: h.Clone(), json: header})
	}
	return header, err
}

// lastHeaderJSON is the response header FinishEncoding encoded last: a
// copy, as the caller's may change once the record is written.
var lastHeaderJSON atomic.Pointer[headerJSON]

type headerJSON struct {
	header http.Header
	json   []byte
}

// sameHeader reports whether a and b hold the same values, in order.
func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || (va == nil) != (vb == nil) || !slices.Equal(va, vb) { // nil is null, empty []
			return false
		}
	}
	return true
}

// Errors a Store returns. Implementations may wrap them; test with
// errors.Is.
var (
	// ErrInvalidTransition refuses a state change the service model does
	// not allow (see State.CanBecome).
	ErrInvalidTransition = errors.New("invalid idempotency record transition")
	// ErrLeaseLost refuses Renew, Finish or Release by a worker that no
	// longer holds the record: its lease lapsed, another attempt took the
	// key over, or the record is gone.
	ErrLeaseLost = errors.New("idempotency attempt no longer holds its record")
	// ErrFull refuses Create of a new identity by a store at its capacity
	// (MemoryOptions.MaxRecords). Evicting a live record instead would
	// break at-most-once. A *FullError says when to retry.
	ErrFull = errors.New("idempotency store is full")
	// ErrUncommitted refuses Finish by an AttemptBinder that could not
	// commit the record together with the handler's own writes: they
	// were rolled back, or, when the commit's outcome is unknown, may
	// have been. The handler's response may then claim an effect that
	// does not exist, so the engine answers 503 instead; a retry with
	// the same key learns the outcome.
	ErrUncommitted = errors.New("the handler's writes and the idempotency record were not committed together")
)

// FullError is ErrFull with a hint of when room may free up.
type FullError struct {
	RetryAfter time.Duration
	// Tenant is true when the store has room but the request's tenant
	// holds its share (MemoryOptions.TenantPercent).
	Tenant bool
}

func (e *FullError) Error() string {
	if e.Tenant {
		return fmt.Sprintf("%v for this tenant, which holds its share; retry after %v", ErrFull, e.RetryAfter)
	}
	return fmt.Sprintf("%v; retry after %v", ErrFull, e.RetryAfter)
}

func (e *FullError) Unwrap() error { return ErrFull }

// NewToken returns a fresh attempt token: rand.Text's 26 base32
// characters, 130 random bits (at least 128: docs/engine.md, Records,
// leases and fencing). Stores
// draw one at every Create.
func NewToken() string { return rand.Text() }

// Store persists idempotency records. It offers exactly the atomic
// primitives the service model needs and nothing that could bypass it:
// there is no way to overwrite a live record or to move a record back
// into processing. Leases and expiry are measured with the store's own
// clock. An expired record, and a processing record whose lease lapsed,
// behave as absent in every method.
//
// Identities are opaque byte strings chosen by the engine. Implementations
// must be safe for concurrent use and may share Response values with
// callers. The package storetest holds every implementation to this
// contract.
type Store interface {
	// Create stores a processing record under id unless a live record is
	// there, atomically. From rec it takes Key, Operation, Fingerprint and
	// RawDigest; it sets State to Processing, draws a new Token, stamps
	// CreatedAt and UpdatedAt, and sets LeaseUntil lease from now. It
	// returns the record now live under id and whether it is the new one.
	// A store at its capacity may refuse a new record with ErrFull.
	Create(ctx context.Context, id string, rec Record, lease time.Duration) (live Record, created bool, err error)

	// Renew extends the lease of the processing record under id held by
	// token to lease from now. ErrLeaseLost when token does not hold a
	// live processing record under id.
	Renew(ctx context.Context, id, token string, lease time.Duration) error

	// Finish moves the processing record under id held by token to state
	// to, atomically: res becomes its Response and Error, UpdatedAt is
	// now, and it expires ttl from now. ErrLeaseLost when token does not
	// hold a live record under id; ErrInvalidTransition for a transition
	// State.CanBecome refuses.
	Finish(ctx context.Context, id, token string, to State, res Result, ttl time.Duration) error

	// Release removes the processing record under id held by token, so
	// that the next duplicate executes: the attempt ended without a result
	// to keep (the handler exited without returning, or failed under
	// on_failed "reexecute"). ErrLeaseLost when token does not hold a live
	// record under id; ErrInvalidTransition when it is finished.
	Release(ctx context.Context, id, token string) error

	// Get returns the live record under id.
	Get(ctx context.Context, id string) (rec Record, ok bool, err error)
}

// CreateFirstStore is a Store whose Create costs about what its Get
// does, one round trip to a server (package redisstore). When
// CreateFirst reports true the engine admits a request with Create
// alone, which answers with the live record when there is one, instead
// of a Get and then a Create: a new key costs one call less, and a
// duplicate one call as before, if one that may cost the server more
// than a Get. The engine then fingerprints every request before the
// call, where after a Get it skips that for a retry that resends the
// record's very bytes: canonicalising costs less than the round trip
// saved, and more than a lookup in memory.
type CreateFirstStore interface {
	Store
	// CreateFirst reports whether the engine should call Create without
	// a Get first; a store that wraps another reports the other's.
	CreateFirst() bool
}

// AttemptBinder is a Store that records the end of an attempt in the same
// transaction as the handler's own writes (package pgstore), so that a
// crash can leave neither an executed effect under a processing record
// (which would run again once the lease lapsed) nor a completed record
// without its effect.
//
// Before the handler runs, the engine calls BindAttempt and gives the
// context it returns to the handler; the attempt's Finish and Release get
// a context derived from it too. Through it the handler reaches the
// attempt's transaction. Finish to Completed commits the handler's writes
// with the record, or rolls them back and returns ErrUncommitted; Finish
// to Failed and Release roll them back and then act as usual. A handler
// that never asks for the transaction leaves every call as it was.
type AttemptBinder interface {
	Store
	// BindAttempt returns ctx bound to the attempt holding token on the
	// record under id.
	BindAttempt(ctx context.Context, id, token string) context.Context
}
