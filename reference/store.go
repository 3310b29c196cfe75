package reference

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
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
// (spec section 4). Key, Operation, Fingerprint, RawDigest, CreatedAt and
// ExpiresAt never change; State, Response, Error and UpdatedAt are set
// once, by the transition out of processing.
type Record struct {
	Key         string // the idempotency key, bare form
	Operation   string // operation_key
	Fingerprint string // "<algorithm>:<hex digest>" of the request payload
	// RawDigest is the SHA-256 of the fingerprint inputs exactly as sent.
	// A retry usually resends the very same bytes; when its raw digest
	// equals the record's, so does its fingerprint, and the engine skips
	// canonicalisation, most of the cost of a replay.
	RawDigest [sha256.Size]byte
	State     State
	Response  Response // the answer of a finished attempt, replayed to duplicates
	Error     string   // why a failed attempt failed
	CreatedAt time.Time
	UpdatedAt time.Time
	// ExpiresAt ends the record's life: from then on a store treats it as
	// absent, so the identity starts afresh. It is CreatedAt plus the
	// policy's ttl.
	ExpiresAt time.Time
}

// Live reports whether the record has not expired at now.
func (r *Record) Live(now time.Time) bool { return now.Before(r.ExpiresAt) }

// Result is how an attempt ended.
type Result struct {
	Response Response // what the attempt answered; replayed to duplicates
	Error    string   // for a failed attempt, why
	At       time.Time
}

// Errors a Store returns. Implementations may wrap them; test with
// errors.Is.
var (
	// ErrInvalidTransition refuses a state change the service model does
	// not allow (see State.CanBecome), or Delete of a record that is not
	// failed.
	ErrInvalidTransition = errors.New("invalid idempotency record transition")
	// ErrNotFound means the attempt's record no longer exists: it expired,
	// or it was replaced by another attempt with another fingerprint.
	ErrNotFound = errors.New("idempotency record not found")
)

// Store persists idempotency records. It offers exactly the atomic
// primitives the service model needs and nothing that could bypass it:
// there is no way to overwrite a live record or to move a record back
// into processing. A record is live until its ExpiresAt; an expired record
// behaves as absent in every method.
//
// Identities are opaque strings chosen by the engine. Implementations must
// be safe for concurrent use and may share Response values with callers.
type Store interface {
	// Create stores rec (whose State must be Processing) under id unless a
	// live record exists there, atomically. It returns the record now live
	// under id and whether it is rec. An expired record is replaced.
	Create(ctx context.Context, id string, rec Record) (live Record, created bool, err error)

	// Finish moves the record under id out of processing, atomically:
	// to becomes its State and res its Response, Error and UpdatedAt. The
	// fingerprint fences the call to the attempt that created the record:
	// when the live record has another one (or there is none) the result
	// is ErrNotFound. A transition State.CanBecome refuses is
	// ErrInvalidTransition.
	Finish(ctx context.Context, id, fingerprint string, to State, res Result) error

	// Get returns the live record under id.
	Get(ctx context.Context, id string) (rec Record, ok bool, err error)

	// Delete removes the record under id if it is failed, so that the next
	// duplicate executes again (on_failed: reexecute). It returns nil when
	// there is no live record and ErrInvalidTransition when the live
	// record is not failed: a racing request may already have started a
	// new attempt, which must survive.
	Delete(ctx context.Context, id string) error
}
