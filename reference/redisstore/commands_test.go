package redisstore_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/rueidis"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/redisstore"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// TestCommandsPerRequest counts, on a Redis of its own, the commands the
// engine sends through the store for each request (INFO commandstats,
// which counts a script's calls and a transaction's commands each): a new
// key costs Create, a transaction of SET NX GET and PEXPIRETIME, with GET
// and PEXPIRETIME of the previous layout's key name on one server, and
// Finish, a SET of the finished record and the script that checks the
// token and renames it over the record; a retry of a finished key costs
// Create alone. Nothing else: no Get before Create, no renewal, no probe,
// nothing read twice.
func TestCommandsPerRequest(t *testing.T) {
	policy, err := os.ReadFile("../testdata/adapter.json")
	if err != nil {
		t.Fatal(err)
	}
	redis := testserver.StartOwnRedis(t)
	s, err := redisstore.Open(redis.URL(), redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	e, err := reference.New("adapter.json", policy, reference.WithStore(s), reference.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	stats := redisstore.NewTestClient(t, redis.URL())
	ctx := context.Background()
	handler := func(context.Context) (reference.Response, error) {
		return reference.Response{Status: http.StatusCreated, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"id":1}`)}, nil
	}
	send := func(key string, want reference.Outcome) {
		t.Helper()
		req := &reference.Request{Method: http.MethodPost, Path: "/orders", Header: http.Header{"X-Idempotency-Key": {key}, "X-Tenant-Id": {"tenant-a"}}, Body: []byte(`{"n":1}`)}
		if r := e.Handle(ctx, req, handler); r.Status != http.StatusCreated || r.Outcome != want {
			t.Fatalf("key %s: %d %s, outcome %v; want 201, %v", key, r.Status, r.Body, r.Outcome, want)
		}
	}
	// The first script call loads the script (NOSCRIPT, then EVAL):
	// once per server, not per request.
	send("warm-up", reference.Executed)
	if err := e.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	const keys = 20
	for _, round := range []struct {
		name    string
		outcome reference.Outcome
		want    map[string]int // calls per request
	}{
		{"new keys", reference.Executed, map[string]int{"multi": 1, "set": 2, "get": 1, "pexpiretime": 2, "exec": 1, "evalsha": 1, "getrange": 1, "rename": 1}},
		{"retries of finished keys", reference.Replayed, map[string]int{"multi": 1, "set": 1, "get": 1, "pexpiretime": 2, "exec": 1}},
	} {
		if err := stats.Do(ctx, stats.B().ConfigResetstat().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		for i := range keys {
			send("k"+strconv.Itoa(i), round.outcome)
		}
		if err := e.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		want := make(map[string]int, len(round.want))
		for cmd, n := range round.want {
			want[cmd] = n * keys
		}
		got := commandCalls(t, stats)
		// The client pings a connection that was idle for a second, a
		// probe of the connection, not of the request.
		if got["ping"] >= keys {
			t.Errorf("%s: %d PINGs for %d requests", round.name, got["ping"], keys)
		}
		delete(got, "ping")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: commands for %d requests (-want +got):\n%s", round.name, keys, diff)
		}
	}
}

// connectionCommands set up a connection, which the client opens when
// it needs one, not for a request.
var connectionCommands = []string{"hello", "select", "auth"}

// commandCalls reads INFO commandstats: the calls of each command since
// CONFIG RESETSTAT, but for that one and INFO, the test's own, and those
// that set up a connection.
func commandCalls(t *testing.T, client rueidis.Client) map[string]int {
	t.Helper()
	info, err := client.Do(context.Background(), client.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	calls := make(map[string]int)
	for line := range strings.Lines(info) {
		// cmdstat_NAME:calls=N,usec=...
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":calls=")
		if !ok || name == "config|resetstat" || name == "info" || slices.Contains(connectionCommands, name) || strings.HasPrefix(name, "client|") {
			continue
		}
		n, err := strconv.Atoi(rest[:strings.IndexByte(rest+",", ',')])
		if err != nil {
			t.Fatalf("INFO commandstats: %q: %v", line, err)
		}
		calls[name] = n
	}
	return calls
}
