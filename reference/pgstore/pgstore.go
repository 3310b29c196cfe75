// Package pgstore is a reference.Store on PostgreSQL, for engines on
// several replicas sharing one database.
//
// Records live in one table (Open creates it; DDL shows it). Creation is
// one INSERT ... ON CONFLICT that takes over only a row that is no longer
// live; every other change is an UPDATE or DELETE fenced by the attempt
// token; all times are the server's now(), so replicas with skewed
// clocks agree. One column, live_until, is the lease's end while the
// record is processing and its expiry once it finished: a row past it is
// absent. Such rows stay in the table until taken over or removed by
// DeleteExpired.
//
// A handler may write in the attempt's own transaction (Tx): its writes
// then commit together with the attempt's completed record, or not at
// all (see reference.AttemptBinder).
package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemlint/idemlint/reference"
)

// DefaultTable is the table of the records unless Options says otherwise.
const DefaultTable = "idemlint_records"

// Options configures a Store.
type Options struct {
	// Table names the table, a lower-case SQL identifier; "" means
	// DefaultTable.
	Table string
}

// DDL returns the statement that creates the table, for operators who
// create it themselves.
func DDL(table string) string {
	return `CREATE TABLE IF NOT EXISTS ` + table + ` (
  id bytea PRIMARY KEY,
  state smallint NOT NULL,
  token text NOT NULL,
  key bytea NOT NULL,
  operation text NOT NULL,
  fingerprint bytea NOT NULL,
  raw_digest bytea NOT NULL,
  response_status integer NOT NULL DEFAULT 0,
  response_header bytea,
  response_body bytea,
  error bytea,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  live_until timestamptz NOT NULL
)`
}

var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Store is a reference.Store on PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	sql  statements
}

// statements are the store's SQL, with the table name filled in.
type statements struct {
	create, selectLive, renew, finish, release, classify, deleteExpired string
}

const columns = `state, token, key, operation, fingerprint, raw_digest, response_status, response_header, response_body, error, created_at, updated_at, live_until`

func newStatements(table string) statements {
	return statements{
		create: `INSERT INTO ` + table + ` AS r (id, state, token, key, operation, fingerprint, raw_digest, created_at, updated_at, live_until)
VALUES ($1, 1, $2, $3, $4, $5, $6, now(), now(), now() + $7 * interval '1 millisecond')
ON CONFLICT (id) DO UPDATE SET state = 1, token = excluded.token, key = excluded.key, operation = excluded.operation,
  fingerprint = excluded.fingerprint, raw_digest = excluded.raw_digest, response_status = 0, response_header = NULL,
  response_body = NULL, error = NULL, created_at = excluded.created_at, updated_at = excluded.updated_at, live_until = excluded.live_until
WHERE r.live_until <= now()
RETURNING ` + columns,
		selectLive: `SELECT ` + columns + ` FROM ` + table + ` WHERE id = $1 AND live_until > now()`,
		renew:      `UPDATE ` + table + ` SET live_until = now() + $3 * interval '1 millisecond' WHERE id = $1 AND token = $2 AND state = 1 AND live_until > now()`,
		// statement_timestamp(), not now(): in the handler's transaction
		// now() is when that transaction began, not when the attempt
		// finished. Outside a transaction the two are the same.
		finish: `UPDATE ` + table + ` SET state = $3, response_status = $4, response_header = $5, response_body = $6, error = $7,
  updated_at = statement_timestamp(), live_until = statement_timestamp() + $8 * interval '1 millisecond'
WHERE id = $1 AND token = $2 AND state = 1 AND live_until > statement_timestamp()`,
		release:       `DELETE FROM ` + table + ` WHERE id = $1 AND token = $2 AND state = 1 AND live_until > now()`,
		classify:      `SELECT state FROM ` + table + ` WHERE id = $1 AND token = $2 AND live_until > now()`,
		deleteExpired: `DELETE FROM ` + table + ` WHERE live_until <= now()`,
	}
}

// defaultMaxConns is the pool size unless the URL sets pool_max_conns:
// pgxpool's default (the number of CPUs, at least 4) queues a burst of
// concurrent requests behind a handful of connections.
const defaultMaxConns = 16

// Open connects to the database at url (postgres://user@host/db?..., or a
// libpq key=value string) and creates the table unless it exists.
func Open(ctx context.Context, url string, o Options) (*Store, error) {
	table := o.Table
	if table == "" {
		table = DefaultTable
	}
	if !identifier.MatchString(table) {
		return nil, fmt.Errorf("postgres store: table name %q is not a lower-case SQL identifier", table)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns
	}
	return openConfig(ctx, cfg, table)
}

// openConfig is Open on a parsed configuration.
func openConfig(ctx context.Context, cfg *pgxpool.Config, table string) (*Store, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	if err := createTable(ctx, pool, table); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return &Store{pool: pool, sql: newStatements(table)}, nil
}

// createTable creates the table under an advisory lock: replicas starting
// together would otherwise race in CREATE TABLE IF NOT EXISTS, which
// PostgreSQL does not make atomic.
func createTable(ctx context.Context, pool *pgxpool.Pool, table string) error {
	h := fnv.New64a()
	h.Write([]byte("idemlint table " + table))
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(h.Sum64())); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, DDL(table))
		return err
	})
}

// Close closes the connections.
func (s *Store) Close() { s.pool.Close() }

func ms(d time.Duration) int64 { return d.Milliseconds() }

// createTries bounds the tries of a Create whose connection failed.
const createTries = 3

// Create implements reference.Store. A try whose connection failed may
// have inserted the row all the same (the reply was lost); the next try,
// with the same token, then finds that row, which is the one created:
// it is not left processing with nobody to finish it.
func (s *Store) Create(ctx context.Context, id string, rec reference.Record, lease time.Duration) (reference.Record, bool, error) {
	token := reference.NewToken()
	// A row that lapses between the two statements is taken over by
	// the next round; each round is bounded by the round trips.
	for tries := 1; ; {
		live, err := s.scan(s.pool.QueryRow(ctx, s.sql.create, []byte(id), token, []byte(rec.Key), rec.Operation, []byte(rec.Fingerprint), rec.RawDigest[:], ms(lease)))
		if err == nil {
			return live, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			if tries < createTries && connectionLost(ctx, err) {
				tries++
				continue
			}
			return reference.Record{}, false, fmt.Errorf("postgres store: create: %w", err)
		}
		live, ok, err := s.Get(ctx, id)
		if err != nil || ok {
			return live, ok && live.Token == token, err
		}
	}
}

// CreateFirst implements reference.CreateFirstStore: a new key costs the
// INSERT and Finish's UPDATE with no SELECT before them, and a duplicate
// the INSERT that meets the live row and the SELECT of it, which is less
// in all than a Get before every Create (docs/performance.md, PostgreSQL:
// create first).
func (s *Store) CreateFirst() bool { return true }

// connectionLost reports whether err broke the connection rather than
// being the database's answer, so that a statement may or may not have
// run; a caller's own deadline or cancellation is neither.
func connectionLost(ctx context.Context, err error) bool {
	var pgErr *pgconn.PgError
	return ctx.Err() == nil && !errors.As(err, &pgErr)
}

// Get implements reference.Store.
func (s *Store) Get(ctx context.Context, id string) (reference.Record, bool, error) {
	rec, err := s.scan(s.pool.QueryRow(ctx, s.sql.selectLive, []byte(id)))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return reference.Record{}, false, nil
	case err != nil:
		return reference.Record{}, false, fmt.Errorf("postgres store: get: %w", err)
	}
	return rec, true, nil
}

// scan reads a row of the columns.
func (s *Store) scan(row pgx.Row) (reference.Record, error) {
	var (
		rec                  reference.Record
		state                int16
		key, fp, raw, header []byte
		msg                  []byte
		liveUntil            time.Time
	)
	if err := row.Scan(&state, &rec.Token, &key, &rec.Operation, &fp, &raw, &rec.Response.Status, &header, &rec.Response.Body, &msg, &rec.CreatedAt, &rec.UpdatedAt, &liveUntil); err != nil {
		return reference.Record{}, err
	}
	rec.State, rec.Key, rec.Fingerprint, rec.Error = reference.State(state), string(key), string(fp), string(msg)
	copy(rec.RawDigest[:], raw)
	if rec.State == reference.Processing {
		rec.LeaseUntil = liveUntil
	} else {
		rec.ExpiresAt = liveUntil
	}
	if len(header) > 0 {
		if err := json.Unmarshal(header, &rec.Response.Header); err != nil {
			return reference.Record{}, fmt.Errorf("a stored response header is not JSON: %w", err)
		}
	}
	return rec, nil
}

// Renew implements reference.Store.
func (s *Store) Renew(ctx context.Context, id, token string, lease time.Duration) error {
	tag, err := s.pool.Exec(ctx, s.sql.renew, []byte(id), token, ms(lease))
	switch {
	case err != nil:
		return fmt.Errorf("postgres store: renew: %w", err)
	case tag.RowsAffected() == 0:
		return reference.ErrLeaseLost
	}
	return nil
}

// Finish implements reference.Store. When the handler wrote in the
// attempt's transaction, a completed attempt's record is written and
// committed in it, and a failed attempt's writes are rolled back first.
func (s *Store) Finish(ctx context.Context, id, token string, to reference.State, res reference.Result, ttl time.Duration) error {
	header, err := reference.FinishEncoding(to, res)
	if err != nil {
		return fmt.Errorf("postgres store: finish: %w", err)
	}
	body := res.Response.Body
	if body == nil {
		body = []byte{} // NULL is for processing records
	}
	args := []any{[]byte(id), token, int16(to), res.Response.Status, header, body, []byte(res.Error), ms(ttl)}
	if tx := s.endAttempt(ctx, id, token); tx != nil {
		if to == reference.Completed {
			return s.commitFinish(ctx, tx, id, token, args)
		}
		// On failure the pool discards the connection, and with it the
		// transaction.
		_ = tx.Rollback(ctx)
	}
	tag, err := s.pool.Exec(ctx, s.sql.finish, args...)
	if err != nil {
		return fmt.Errorf("postgres store: finish: %w", err)
	}
	return s.fenced(ctx, tag.RowsAffected(), id, token)
}

// commitFinish completes the record in the handler's transaction and
// commits both. When that fails the writes are gone, or may be (a commit
// whose answer was lost), so the record must not stay processing until
// its lease lapses: it is released, and the next duplicate runs again. If
// the commit did go through, only its answer lost, the record is
// completed and the fenced release, which waits for the transaction's row
// lock, matches nothing: then the attempt is finished after all.
func (s *Store) commitFinish(ctx context.Context, tx pgx.Tx, id, token string, args []any) error {
	tag, err := tx.Exec(ctx, s.sql.finish, args...)
	committing := err == nil && tag.RowsAffected() > 0
	if committing {
		if err = tx.Commit(ctx); err == nil {
			return nil
		}
	}
	_ = tx.Rollback(ctx) // a no-op after a failed Commit
	if err == nil {      // the fence matched no row: another attempt holds the record
		err = s.fenced(ctx, 0, id, token)
	} else if tag, rerr := s.pool.Exec(ctx, s.sql.release, []byte(id), token); rerr != nil {
		err = errors.Join(err, rerr)
	} else if committing && tag.RowsAffected() == 0 && s.completedBy(ctx, id, token) {
		return nil // the commit went through; only its reply was lost
	}
	return fmt.Errorf("postgres store: finish: %w: %w", reference.ErrUncommitted, err)
}

// Release implements reference.Store. The handler's writes in the
// attempt's transaction are rolled back.
func (s *Store) Release(ctx context.Context, id, token string) error {
	if tx := s.endAttempt(ctx, id, token); tx != nil {
		_ = tx.Rollback(ctx) // as in Finish
	}
	tag, err := s.pool.Exec(ctx, s.sql.release, []byte(id), token)
	if err != nil {
		return fmt.Errorf("postgres store: release: %w", err)
	}
	return s.fenced(ctx, tag.RowsAffected(), id, token)
}

// completedBy reports whether the record under id is completed by the
// attempt holding token.
func (s *Store) completedBy(ctx context.Context, id, token string) bool {
	var state int16
	err := s.pool.QueryRow(ctx, s.sql.classify, []byte(id), token).Scan(&state)
	return err == nil && reference.State(state) == reference.Completed
}

// fenced tells why a token-fenced change of a processing record changed
// no row: the token holds no live record, or the record already ended.
func (s *Store) fenced(ctx context.Context, changed int64, id, token string) error {
	if changed > 0 {
		return nil
	}
	var state int16
	switch err := s.pool.QueryRow(ctx, s.sql.classify, []byte(id), token).Scan(&state); {
	case errors.Is(err, pgx.ErrNoRows):
		return reference.ErrLeaseLost
	case err != nil:
		return fmt.Errorf("postgres store: %w", err)
	}
	return fmt.Errorf("%w: the attempt already ended (%s)", reference.ErrInvalidTransition, reference.State(state))
}

// DeleteExpired removes the rows that are no longer live and returns how
// many. Nothing depends on it but the table's size: run it now and then.
func (s *Store) DeleteExpired(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, s.sql.deleteExpired)
	if err != nil {
		return 0, fmt.Errorf("postgres store: delete expired: %w", err)
	}
	return tag.RowsAffected(), nil
}

// attemptKey is the context key of the attempt BindAttempt binds.
type attemptKey struct{}

// boundAttempt is an attempt whose handler may write in its transaction.
type boundAttempt struct {
	store     *Store
	id, token string

	mu    sync.Mutex
	tx    pgx.Tx // begun at the handler's first Tx; nil before
	ended bool   // Finish or Release took the transaction
}

// BindAttempt implements reference.AttemptBinder.
func (s *Store) BindAttempt(ctx context.Context, id, token string) context.Context {
	return context.WithValue(ctx, attemptKey{}, &boundAttempt{store: s, id: id, token: token})
}

// ErrNoAttempt refuses Tx outside the handler of a running attempt.
var ErrNoAttempt = errors.New("postgres store: no running attempt: Tx needs the context the engine gave the handler")

// Tx returns the transaction of the attempt whose handler was given ctx,
// beginning it at the first call. What the handler writes in it commits
// together with the attempt's completed record, or not at all: it is
// rolled back when the attempt fails, is released, or lost its record to
// another attempt (the engine then answers 503 instead of the handler's
// response). The engine commits: the transaction's Commit and Rollback
// refuse; to undo its writes, the handler fails the attempt. Like any
// pgx.Tx it is not safe for concurrent use, and it holds one of the
// pool's connections until the attempt ends.
func Tx(ctx context.Context) (pgx.Tx, error) {
	a, _ := ctx.Value(attemptKey{}).(*boundAttempt)
	if a == nil {
		return nil, ErrNoAttempt
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended {
		return nil, fmt.Errorf("%w: the attempt ended", ErrNoAttempt)
	}
	if a.tx == nil {
		tx, err := a.store.pool.Begin(ctx)
		if err != nil {
			return nil, fmt.Errorf("postgres store: begin: %w", err)
		}
		a.tx = tx
	}
	return attemptTx{a.tx}, nil
}

// errEngineCommits refuses the handler's Commit and Rollback.
var errEngineCommits = errors.New("postgres store: the attempt's transaction ends with the attempt: the engine commits it, or rolls it back when the handler fails")

// attemptTx is the transaction as the handler sees it: a Commit of its
// own would let the record say processing over committed writes.
type attemptTx struct{ pgx.Tx }

func (attemptTx) Commit(context.Context) error   { return errEngineCommits }
func (attemptTx) Rollback(context.Context) error { return errEngineCommits }

// endAttempt ends the attempt bound to ctx, if it is the one holding token
// on the record under id in this store, and returns its transaction: nil
// when the handler began none.
func (s *Store) endAttempt(ctx context.Context, id, token string) pgx.Tx {
	a, _ := ctx.Value(attemptKey{}).(*boundAttempt)
	if a == nil || a.store != s || a.id != id || a.token != token {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ended = true
	return a.tx
}
