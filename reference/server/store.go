package server

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/pgstore"
	"github.com/idemlint/idemlint/reference/redisstore"
)

// postgresOpenTimeout bounds how long opening a PostgreSQL store may take
// (connecting and creating its table).
const postgresOpenTimeout = 30 * time.Second

// ErrStoreURL refuses a store URL of no known scheme.
var ErrStoreURL = errors.New(`--store must be "memory", a redis://, rediss:// or unix:// URL, or a postgres:// URL`)

// OpenStore opens the store that raw names: "memory", a redis://,
// rediss:// or unix:// URL, or a postgres:// URL. It returns nil for
// memory, which the engine creates itself from the policy's limits, and
// the function that closes the store. An error never holds the URL's
// password (see RedactURL).
func OpenStore(ctx context.Context, raw string) (reference.Store, func(), error) {
	noop := func() {}
	scheme, _, _ := strings.Cut(raw, "://")
	switch scheme {
	case "memory":
		return nil, noop, nil
	case "redis", "rediss", "unix":
		s, err := redisstore.Open(raw, redisstore.Options{})
		if err != nil {
			return nil, noop, RedactURL(err, raw)
		}
		return s, s.Close, nil
	case "postgres", "postgresql":
		openCtx, cancel := context.WithTimeout(ctx, postgresOpenTimeout)
		defer cancel()
		s, err := pgstore.Open(openCtx, raw, pgstore.Options{})
		if err != nil {
			return nil, noop, RedactURL(err, raw)
		}
		return s, s.Close, nil
	}
	return nil, noop, ErrStoreURL
}

// RedactURL returns err with every form of the password in raw replaced
// by "xxxxx" (or, when raw cannot be parsed, raw itself by "(the --store
// URL)"), as the drivers' messages may quote the URL they were given.
// The result still wraps err, so errors.Is and errors.As see through it;
// err's own message may hold the password, so print the result, never
// what it wraps.
func RedactURL(err error, raw string) error {
	return &redactedError{msg: redact(err.Error(), raw), err: err}
}

func redact(msg, raw string) string {
	u, perr := url.Parse(raw)
	if perr != nil {
		// Unparsable: the whole URL may be quoted, password and all.
		return strings.ReplaceAll(msg, raw, "(the --store URL)")
	}
	var secrets []string
	if p, ok := u.User.Password(); ok {
		secrets = append(secrets, p)
	}
	secrets = append(secrets, u.Query()["password"]...)
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for _, form := range []string{s, url.PathEscape(s), url.QueryEscape(s), url.UserPassword("", s).String()[1:]} {
			msg = strings.ReplaceAll(msg, form, "xxxxx")
		}
	}
	return msg
}

// redactedError is an error whose message had its secrets removed.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// ExpirySweeper is a store whose dead records stay until removed
// (pgstore; Redis and memory stores expire on their own).
type ExpirySweeper interface {
	DeleteExpired(context.Context) (int64, error)
}

// DefaultSweepEvery is how often Sweep removes dead records.
const DefaultSweepEvery = 5 * time.Minute

// Sweep removes s's dead records every interval until ctx ends, logging
// a failure and going on.
func Sweep(ctx context.Context, s ExpirySweeper, every time.Duration, logger *slog.Logger) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if _, err := s.DeleteExpired(ctx); err != nil {
				logger.Error("idempotency store: removing expired records failed", "error", err)
			}
		}
	}
}

// MemoryStoreGCPercent is the GOGC CollectForMemoryStore sets: the heap is
// then mostly records kept for their ttl, and 50 lets it peak at one and
// a half times them rather than the default's twice, for a little more CPU
// (docs/performance.md, serve's collector).
const MemoryStoreGCPercent = 50

// ExternalStoreGCPercent is the GOGC serve runs with when its records
// live in Redis or PostgreSQL: the heap then holds only the demo's
// resources and the requests in flight, so collecting a third as often as
// the default saves CPU for a heap a few tens of MB larger
// (docs/performance.md, serve's collector).
const ExternalStoreGCPercent = 300

// CollectForMemoryStore sets the collector to MemoryStoreGCPercent
// unless the environment sets GOGC, and returns the function that
// restores it.
func CollectForMemoryStore() (restore func()) { return collectAt(MemoryStoreGCPercent) }

// CollectForExternalStore is CollectForMemoryStore with
// ExternalStoreGCPercent.
func CollectForExternalStore() (restore func()) { return collectAt(ExternalStoreGCPercent) }

// collectAt sets GOGC to percent unless the environment sets it, and
// returns the function that restores it.
func collectAt(percent int) (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	old := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(old) }
}
