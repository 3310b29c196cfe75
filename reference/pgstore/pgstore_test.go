package pgstore_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/pgstore"
	"github.com/idemlint/idemlint/reference/storetest"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

var tables atomic.Int64

// open returns a store on the test cluster in a table no other store of
// the run shares.
func open(t *testing.T) *pgstore.Store {
	t.Helper()
	url := testserver.StartPostgres(t).URL()
	s, err := pgstore.Open(context.Background(), url, pgstore.Options{Table: "records_" + strconv.FormatInt(tables.Add(1), 10)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) reference.Store { return open(t) })
}

func TestOpenRefusesBadTableName(t *testing.T) {
	_, err := pgstore.Open(context.Background(), "postgres://localhost/x", pgstore.Options{Table: "records; DROP TABLE x"})
	if err == nil || !strings.Contains(err.Error(), "not a lower-case SQL identifier") {
		t.Errorf("Open = %v, want the table name refused", err)
	}
}

// TestOpenTwiceSharesTheTable: replicas opening the same table concurrently
// all succeed, and see one another's records.
func TestOpenTwiceSharesTheTable(t *testing.T) {
	url := testserver.StartPostgres(t).URL()
	ctx := context.Background()
	const replicas = 4
	table := "shared_records_" + strconv.FormatInt(tables.Add(1), 10) // fresh under -count too
	stores := make(chan *pgstore.Store, replicas)
	errs := make(chan error, replicas)
	for range replicas {
		go func() {
			s, err := pgstore.Open(ctx, url, pgstore.Options{Table: table})
			errs <- err
			stores <- s
		}()
	}
	var all []*pgstore.Store
	for range replicas {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		s := <-stores
		t.Cleanup(s.Close)
		all = append(all, s)
	}
	rec, created, err := all[0].Create(ctx, "id", reference.Record{Fingerprint: "fp"}, time.Minute)
	if err != nil || !created {
		t.Fatalf("Create = %v, %v", created, err)
	}
	if got, ok, err := all[replicas-1].Get(ctx, "id"); err != nil || !ok || got.Token != rec.Token {
		t.Errorf("another replica's Get = %+v, %v, %v", got, ok, err)
	}
}

func TestDeleteExpired(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	for i := range 3 {
		if _, _, err := s.Create(ctx, strconv.Itoa(i), reference.Record{}, time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	live, _, err := s.Create(ctx, "live", reference.Record{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if n, err := s.DeleteExpired(ctx); err != nil || n != 3 {
		t.Errorf("DeleteExpired = %d, %v; want the 3 lapsed rows", n, err)
	}
	if got, ok, _ := s.Get(ctx, "live"); !ok || got.Token != live.Token {
		t.Error("DeleteExpired removed a live record")
	}
}
