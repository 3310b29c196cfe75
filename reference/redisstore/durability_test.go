package redisstore_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/redisstore"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// TestDurability: the store warns of a server without an append-only
// file and of one that evicts, and of nothing once both are set as
// at-most-once needs; a server that refuses CONFIG is no error.
func TestDurability(t *testing.T) {
	redis := testserver.StartRedis(t)
	ctx := context.Background()
	admin := redisstore.NewTestClient(t, redis.URL())
	config := func(name, value string) {
		t.Helper()
		if err := admin.Do(ctx, admin.B().ConfigSet().ParameterValue().ParameterValue(name, value).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	// The shared test server runs without persistence; put it back.
	t.Cleanup(func() {
		config("appendonly", "no")
		config("appendfsync", "everysec")
		config("save", "")
		config("maxmemory-policy", "noeviction")
	})
	s, err := redisstore.New(ctx, admin, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		appendonly, fsync, save, policy string
		want                            []string // a telling part of each warning
	}{
		{"no", "always", "", "noeviction", []string{"persists nothing"}},
		{"no", "always", "3600 1", "noeviction", []string{`persists only snapshots (appendonly no, save "3600 1")`}},
		{"yes", "everysec", "", "noeviction", []string{"lazily (appendfsync everysec)"}},
		{"yes", "always", "", "volatile-lru", []string{"maxmemory-policy volatile-lru"}},
		{"no", "always", "", "allkeys-lru", []string{"persists nothing", "maxmemory-policy allkeys-lru"}},
		{"yes", "always", "", "noeviction", nil},
	} {
		config("appendonly", tt.appendonly)
		config("appendfsync", tt.fsync)
		config("save", tt.save)
		config("maxmemory-policy", tt.policy)
		warnings, read, err := s.Durability(ctx)
		if err != nil || !read {
			t.Fatalf("appendonly %s, save %q, %s: read %v, %v", tt.appendonly, tt.save, tt.policy, read, err)
		}
		ok := len(warnings) == len(tt.want)
		for i := 0; ok && i < len(warnings); i++ {
			ok = strings.Contains(warnings[i], tt.want[i])
		}
		if !ok {
			t.Errorf("appendonly %s, save %q, %s: warnings %q, want ones saying %q", tt.appendonly, tt.save, tt.policy, warnings, tt.want)
		}
	}

	// A user without CONFIG, as on managed services.
	if err := admin.Do(ctx, admin.B().Arbitrary("ACL", "SETUSER", "noconfig", "on", ">noconfig-password", "~*", "+@all", "-config").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(ctx, admin.B().Arbitrary("ACL", "DELUSER", "noconfig").Build()) })
	limited, err := redisstore.New(ctx, redisstore.NewTestClient(t, "unix://noconfig:noconfig-password@"+redis.Socket), redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if warnings, read, err := limited.Durability(ctx); err != nil || read || warnings != nil {
		t.Errorf("CONFIG refused: %q, read %v, %v; want nothing read and no error", warnings, read, err)
	}
}

// TestCrashLosesRecordsUnlessSynced measures what Durability warns of:
// keys completed through the engine, Redis killed (SIGKILL) and started
// again on its files, then every key retried. Without persistence every
// retry executes again; with appendonly yes and appendfsync always none
// does. (Under appendfsync everysec Redis may answer before it wrote the
// file while an fsync runs: in two runs of ten here a finished
// record came back processing, so that its key would run again once the
// lease lapsed; no test can pin that down.)
func TestCrashLosesRecordsUnlessSynced(t *testing.T) {
	const keys = 100
	policy, err := os.ReadFile("../testdata/adapter.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		settings []string
		again    int // executions of the retries
	}{
		{[]string{"--appendonly", "no", "--save", ""}, keys},
		{[]string{"--appendonly", "yes", "--appendfsync", "always"}, 0},
	} {
		redis := testserver.StartOwnRedis(t, tt.settings...)
		var runs atomic.Int64
		handler := func(context.Context) (reference.Response, error) {
			return reference.Response{Status: http.StatusCreated, Body: []byte(strconv.FormatInt(runs.Add(1), 10))}, nil
		}
		sendAll := func() {
			t.Helper()
			s, err := redisstore.Open(redis.URL(), redisstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			e, err := reference.New("adapter.json", policy, reference.WithStore(s), reference.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			for i := range keys {
				req := &reference.Request{Method: http.MethodPost, Path: "/orders", Header: http.Header{"X-Idempotency-Key": {"k" + strconv.Itoa(i)}}, Body: []byte(`{}`)}
				if r := e.Handle(context.Background(), req, handler); r.Status != http.StatusCreated {
					t.Fatalf("%v: key %d answered %d %s", tt.settings, i, r.Status, r.Body)
				}
			}
			if err := e.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		sendAll()
		redis.Crash(t)
		sendAll()
		if again := int(runs.Load()) - keys; again != tt.again {
			t.Errorf("%v: %d of %d keys executed again after Redis crashed, want %d", tt.settings, again, keys, tt.again)
		} else {
			t.Logf("%v: %d of %d keys executed again after Redis crashed", tt.settings, again, keys)
		}
	}
}
