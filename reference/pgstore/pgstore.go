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
package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
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
		finish: `UPDATE ` + table + ` SET state = $3, response_status = $4, response_header = $5, response_body = $6, error = $7,
  updated_at = now(), live_until = now() + $8 * interval '1 millisecond'
WHERE id = $1 AND token = $2 AND state = 1 AND live_until > now()`,
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

// Create implements reference.Store.
func (s *Store) Create(ctx context.Context, id string, rec reference.Record, lease time.Duration) (reference.Record, bool, error) {
	token := reference.NewToken()
	// A row that lapses between the two statements is taken over by
	// the next round; each round is bounded by the round trips.
	for {
		live, err := s.scan(s.pool.QueryRow(ctx, s.sql.create, []byte(id), token, []byte(rec.Key), rec.Operation, []byte(rec.Fingerprint), rec.RawDigest[:], ms(lease)))
		if err == nil {
			return live, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return reference.Record{}, false, fmt.Errorf("postgres store: create: %w", err)
		}
		live, ok, err := s.Get(ctx, id)
		if err != nil || ok {
			return live, false, err
		}
	}
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

// Finish implements reference.Store.
func (s *Store) Finish(ctx context.Context, id, token string, to reference.State, res reference.Result, ttl time.Duration) error {
	header, err := reference.FinishEncoding(to, res)
	if err != nil {
		return fmt.Errorf("postgres store: finish: %w", err)
	}
	body := res.Response.Body
	if body == nil {
		body = []byte{} // NULL is for processing records
	}
	tag, err := s.pool.Exec(ctx, s.sql.finish, []byte(id), token, int16(to), res.Response.Status, header, body, []byte(res.Error), ms(ttl))
	if err != nil {
		return fmt.Errorf("postgres store: finish: %w", err)
	}
	return s.fenced(ctx, tag.RowsAffected(), id, token)
}

// Release implements reference.Store.
func (s *Store) Release(ctx context.Context, id, token string) error {
	tag, err := s.pool.Exec(ctx, s.sql.release, []byte(id), token)
	if err != nil {
		return fmt.Errorf("postgres store: release: %w", err)
	}
	return s.fenced(ctx, tag.RowsAffected(), id, token)
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
