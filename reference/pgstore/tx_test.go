package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/pgstore"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// shop is an engine on a PostgreSQL store whose handlers write orders in
// the attempt's transaction, and a connection of its own to look at what
// was committed.
type shop struct {
	engine *reference.Engine
	db     *pgxpool.Pool
}

// newShop opens a fresh database with an orders table and an engine on
// it under on_failed onFailed. The orders' names are unique only once
// committed (a deferred constraint), so a handler may write one that
// makes the commit fail.
func newShop(t *testing.T, onFailed string) *shop {
	t.Helper()
	return newShopOn(t, onFailed, func(ctx context.Context, url string) (*pgstore.Store, error) {
		return pgstore.Open(ctx, url, pgstore.Options{})
	}, slog.New(slog.DiscardHandler))
}

// newShopOn is newShop with the store open opens and the engine's logger.
func newShopOn(t *testing.T, onFailed string, open func(ctx context.Context, url string) (*pgstore.Store, error), logger *slog.Logger) *shop {
	t.Helper()
	ctx := context.Background()
	url := testserver.StartPostgres(t).DatabaseURL(t)
	store, err := open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	db, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if _, err := db.Exec(ctx, `CREATE TABLE orders (name text, CONSTRAINT unique_name UNIQUE (name) DEFERRABLE INITIALLY DEFERRED)`); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../testdata/adapter.json")
	if err != nil {
		t.Fatal(err)
	}
	policy := strings.Replace(string(src), `"on_failed": "stored_response"`, fmt.Sprintf(`"on_failed": %q`, onFailed), 1)
	engine, err := reference.New("adapter.json", []byte(policy), reference.WithStore(store), reference.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	return &shop{engine: engine, db: db}
}

// order sends a POST /orders with key through the engine to run.
func (s *shop) order(key string, run reference.Handler) reference.Reply {
	req := &reference.Request{Method: http.MethodPost, Path: "/orders", Header: http.Header{"X-Idempotency-Key": {key}}, Body: []byte(`{"sku": "P1"}`)}
	return s.engine.Handle(context.Background(), req, run)
}

// insert writes the order name in the attempt's transaction.
func insert(ctx context.Context, name string) error {
	tx, err := pgstore.Tx(ctx)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO orders (name) VALUES ($1)`, name)
	return err
}

// placing is a handler that writes the order name and answers 201 with
// it, counting its runs.
func placing(name string, runs *atomic.Int64) reference.Handler {
	return func(ctx context.Context) (reference.Response, error) {
		runs.Add(1)
		if err := insert(ctx, name); err != nil {
			return reference.Response{}, err
		}
		return reference.Response{Status: http.StatusCreated, Body: []byte(name)}, nil
	}
}

// committed returns the names of the committed orders, sorted.
func (s *shop) committed(t *testing.T) []string {
	t.Helper()
	rows, err := s.db.Query(context.Background(), `SELECT name FROM orders ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func wantOrders(t *testing.T, s *shop, when string, want ...string) {
	t.Helper()
	if got := s.committed(t); !slices.Equal(got, want) {
		t.Errorf("%s: committed orders %q, want %q", when, got, want)
	}
}

func wantReply(t *testing.T, what string, got reference.Reply, outcome reference.Outcome, status int, body string) {
	t.Helper()
	if got.Outcome != outcome || got.Status != status || body != "" && string(got.Body) != body {
		t.Errorf("%s: %v %d %s, want %v %d %s", what, got.Outcome, got.Status, got.Body, outcome, status, body)
	}
}

// TestTxCommitsWithTheRecord: the handler's writes are invisible until the
// engine commits them with the completed record; the handler cannot
// commit them itself.
func TestTxCommitsWithTheRecord(t *testing.T) {
	s := newShop(t, "stored_response")
	var runs atomic.Int64
	first := s.order("k1", func(ctx context.Context) (reference.Response, error) {
		resp, err := placing("order-1", &runs)(ctx)
		if err != nil {
			return resp, err
		}
		tx, _ := pgstore.Tx(ctx)
		if err := tx.Commit(ctx); err == nil {
			t.Error("the handler's Commit was accepted")
		}
		wantOrders(t, s, "before the attempt finished")
		return resp, nil
	})
	wantReply(t, "first request", first, reference.Executed, http.StatusCreated, "order-1")
	wantOrders(t, s, "after the attempt finished", "order-1")
	replay := s.order("k1", placing("order-2", &runs))
	wantReply(t, "duplicate", replay, reference.Replayed, http.StatusCreated, "order-1")
	if n := runs.Load(); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
}

// TestTxRolledBackWhenAnotherAttemptTookOver: an attempt whose lease
// lapsed while its handler ran, and whose key another attempt took over,
// cannot finish: its writes vanish and its client gets 503, while the
// other attempt's writes and record stand.
func TestTxRolledBackWhenAnotherAttemptTookOver(t *testing.T) {
	s := newShop(t, "stored_response")
	var runs atomic.Int64
	var second reference.Reply
	first := s.order("k1", func(ctx context.Context) (reference.Response, error) {
		if err := insert(ctx, "order-1"); err != nil {
			return reference.Response{}, err
		}
		// As if this worker had stalled past its lease: the record lapses
		// and a duplicate takes it over and runs to the end.
		if _, err := s.db.Exec(ctx, `UPDATE `+pgstore.DefaultTable+` SET live_until = now() - interval '1 second'`); err != nil {
			return reference.Response{}, err
		}
		second = s.order("k1", placing("order-2", &runs))
		return reference.Response{Status: http.StatusCreated, Body: []byte("order-1")}, nil
	})
	wantReply(t, "the duplicate that took over", second, reference.Executed, http.StatusCreated, "order-2")
	wantReply(t, "the attempt taken over", first, reference.Refused, http.StatusServiceUnavailable, "")
	if first.ErrorCode != reference.CodeNotCommitted {
		t.Errorf("the attempt taken over: error_code %q, want %q", first.ErrorCode, reference.CodeNotCommitted)
	}
	wantOrders(t, s, "after both attempts", "order-2")
	wantReply(t, "a later duplicate", s.order("k1", placing("order-3", &runs)), reference.Replayed, http.StatusCreated, "order-2")
}

// TestTxRolledBackWhenTheCommitFails: a commit the database refuses takes
// the record's completion with it, and the record is released, so the
// next duplicate runs again at once instead of after the lease.
func TestTxRolledBackWhenTheCommitFails(t *testing.T) {
	s := newShop(t, "stored_response")
	if _, err := s.db.Exec(context.Background(), `INSERT INTO orders (name) VALUES ('taken')`); err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int64
	first := s.order("k1", placing("taken", &runs)) // violates the deferred constraint at COMMIT
	wantReply(t, "the attempt whose commit failed", first, reference.Refused, http.StatusServiceUnavailable, "")
	wantOrders(t, s, "after the failed commit", "taken")
	retry := s.order("k1", placing("order-2", &runs))
	wantReply(t, "the retry", retry, reference.Executed, http.StatusCreated, "order-2")
	wantOrders(t, s, "after the retry", "order-2", "taken")
}

// TestTxRolledBackWhenTheHandlerFails: a handler that fails, or exits
// without returning, leaves none of its writes, and its record follows
// on_failed.
func TestTxRolledBackWhenTheHandlerFails(t *testing.T) {
	failing := func(ctx context.Context) (reference.Response, error) {
		if err := insert(ctx, "order-1"); err != nil {
			return reference.Response{}, err
		}
		return reference.Response{}, errors.New("payment declined")
	}
	t.Run("stored_response", func(t *testing.T) {
		s := newShop(t, "stored_response")
		first := s.order("k1", failing)
		wantReply(t, "failing attempt", first, reference.Executed, http.StatusInternalServerError, "")
		wantOrders(t, s, "after the failure")
		var runs atomic.Int64
		retry := s.order("k1", placing("order-2", &runs))
		wantReply(t, "retry", retry, reference.Replayed, http.StatusInternalServerError, string(first.Body))
	})
	t.Run("reexecute", func(t *testing.T) {
		s := newShop(t, "reexecute")
		s.order("k1", failing)
		wantOrders(t, s, "after the failure")
		var runs atomic.Int64
		retry := s.order("k1", placing("order-2", &runs))
		wantReply(t, "retry", retry, reference.Executed, http.StatusCreated, "order-2")
		wantOrders(t, s, "after the retry", "order-2")
	})
	t.Run("Goexit", func(t *testing.T) {
		s := newShop(t, "stored_response")
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.order("k1", func(ctx context.Context) (reference.Response, error) {
				if err := insert(ctx, "order-1"); err != nil {
					return reference.Response{}, err
				}
				runtime.Goexit()
				return reference.Response{}, nil
			})
		}()
		<-done
		wantOrders(t, s, "after the handler exited")
		var runs atomic.Int64
		retry := s.order("k1", placing("order-2", &runs))
		wantReply(t, "retry", retry, reference.Executed, http.StatusCreated, "order-2")
	})
}

// TestTxNeedsARunningAttempt: outside a handler, or once its attempt
// ended, there is no transaction to join.
func TestTxNeedsARunningAttempt(t *testing.T) {
	if _, err := pgstore.Tx(context.Background()); !errors.Is(err, pgstore.ErrNoAttempt) {
		t.Errorf("Tx without an attempt = %v, want ErrNoAttempt", err)
	}
	s := newShop(t, "stored_response")
	var handlerCtx context.Context
	var runs atomic.Int64
	s.order("k1", func(ctx context.Context) (reference.Response, error) {
		handlerCtx = ctx
		return placing("order-1", &runs)(ctx)
	})
	if _, err := pgstore.Tx(handlerCtx); !errors.Is(err, pgstore.ErrNoAttempt) {
		t.Errorf("Tx after the attempt ended = %v, want ErrNoAttempt", err)
	}
}
