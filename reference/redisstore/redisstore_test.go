package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/redisstore"
	"github.com/idemlint/idemlint/reference/storetest"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

var stores atomic.Int64

// open returns a store on the test server whose keys no other store of
// the run shares.
func open(t *testing.T) *redisstore.Store {
	t.Helper()
	url := testserver.StartRedis(t).URL()
	s, err := redisstore.Open(url, redisstore.Options{Prefix: "test" + strconv.FormatInt(stores.Add(1), 10) + ":"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) reference.Store { return open(t) })
}

func TestOpenRefusesBadURL(t *testing.T) {
	if _, err := redisstore.Open("http://127.0.0.1:1", redisstore.Options{}); err == nil {
		t.Error("Open accepted an http URL")
	}
}

// TestServerDown: a store whose server is gone fails every call with an
// error, never a record or a hang.
func TestServerDown(t *testing.T) {
	s, err := redisstore.Open("unix://"+t.TempDir()+"/absent.sock", redisstore.Options{})
	if err == nil {
		defer s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _, err = s.Create(ctx, "id", reference.Record{}, time.Second)
	}
	if err == nil || errors.Is(err, reference.ErrLeaseLost) {
		t.Errorf("a store without a server = %v, want a connection error", err)
	}
}
