package pgstore_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/pgstore"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// replyCutter dials PostgreSQL for a store and, once armed with a
// marker, closes the first connection that sends it right after sending:
// the database runs the statement and commits it, and the reply is lost,
// as when the network fails at the worst moment.
type replyCutter struct {
	marker atomic.Pointer[[]byte]
}

func (c *replyCutter) arm(marker string) {
	m := []byte(marker)
	c.marker.Store(&m)
}

func (c *replyCutter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &cuttingConn{Conn: conn, cutter: c}, nil
}

type cuttingConn struct {
	net.Conn
	cutter *replyCutter
}

func (cc *cuttingConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	if m := cc.cutter.marker.Load(); m != nil && bytes.Contains(p, *m) && cc.cutter.marker.CompareAndSwap(m, nil) {
		cc.Conn.Close() // sent; the reply will find nobody
	}
	return n, err
}

// openCut opens a store on url whose connections c may cut.
func (c *replyCutter) openCut(ctx context.Context, url string) (*pgstore.Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.DialFunc = c.dial
	return pgstore.OpenConfig(ctx, cfg, pgstore.Options{})
}

// TestCreateReplyLost: the INSERT of a Create commits but its reply is
// lost; Create tries again with the same token, finds the row it made and
// answers it created, so no processing row is left that nobody finishes.
func TestCreateReplyLost(t *testing.T) {
	ctx := context.Background()
	var cutter replyCutter
	s, err := cutter.openCut(ctx, testserver.StartPostgres(t).DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	const id = "create-reply-lost"
	cutter.arm(id)
	rec, created, err := s.Create(ctx, id, reference.Record{Key: "k", Fingerprint: "fp"}, time.Hour)
	if err != nil || !created {
		t.Fatalf("Create with its reply lost = created %v, %v; want the row it inserted, created", created, err)
	}
	if cutter.marker.Load() != nil {
		t.Fatal("the connection was never cut")
	}
	if err := s.Finish(ctx, id, rec.Token, reference.Completed, reference.Result{Response: reference.Response{Status: 201}}, time.Hour); err != nil {
		t.Errorf("Finish with the token Create answered: %v", err)
	}
}

// TestFinishReplyLost: the UPDATE that finishes an attempt commits but its
// reply is lost; the engine's retry finds the record finished by this
// attempt, logs no error, and a duplicate replays the answer.
func TestFinishReplyLost(t *testing.T) {
	var logs bytes.Buffer
	var cutter replyCutter
	s := newShopOn(t, "stored_response", cutter.openCut, slog.New(slog.NewTextHandler(&logs, nil)))
	var runs atomic.Int64
	handler := func(ctx context.Context) (reference.Response, error) {
		runs.Add(1)
		cutter.arm("finish-reply-lost") // in the identity the finish sends
		return reference.Response{Status: http.StatusCreated, Body: []byte("done")}, nil
	}
	wantReply(t, "first", s.order("finish-reply-lost", handler), reference.Executed, http.StatusCreated, "done")
	if err := s.engine.Drain(context.Background()); err != nil {
		t.Fatalf("Drain = %v, want the end recorded", err)
	}
	if cutter.marker.Load() != nil {
		t.Fatal("the connection was never cut")
	}
	wantReply(t, "duplicate", s.order("finish-reply-lost", handler), reference.Replayed, http.StatusCreated, "done")
	if runs.Load() != 1 || strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("%d runs; logs:\n%s\nwant one run and no error", runs.Load(), logs.String())
	}
}

// TestTxCommitReplyLost: the COMMIT of the handler's transaction with the
// completed record goes through but its reply is lost; the store finds
// the record completed by this attempt, so the client gets the handler's
// answer, not 503, and nothing is logged as an error.
func TestTxCommitReplyLost(t *testing.T) {
	var logs bytes.Buffer
	var cutter replyCutter
	s := newShopOn(t, "stored_response", cutter.openCut, slog.New(slog.NewTextHandler(&logs, nil)))
	var runs atomic.Int64
	place := placing("order-1", &runs)
	first := s.order("k1", func(ctx context.Context) (reference.Response, error) {
		resp, err := place(ctx)
		cutter.arm("commit") // pgx's COMMIT of the attempt's transaction
		return resp, err
	})
	wantReply(t, "the attempt whose commit reply was lost", first, reference.Executed, http.StatusCreated, "order-1")
	if cutter.marker.Load() != nil {
		t.Fatal("the connection was never cut")
	}
	wantOrders(t, s, "after the commit", "order-1")
	wantReply(t, "duplicate", s.order("k1", place), reference.Replayed, http.StatusCreated, "order-1")
	if runs.Load() != 1 || strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("%d runs; logs:\n%s\nwant one run and no error", runs.Load(), logs.String())
	}
}
