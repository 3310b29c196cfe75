package conform

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/reference"
)

// serveReplicas serves one replica of testdata/orders.json's engine per
// store, each on its own 127.0.0.1 port, all in front of one Demo: the
// business service the replicas share, so that its effects counter (at
// the returned URL) counts executions across replicas. Pass one store
// several times for replicas that share it.
func serveReplicas(t testing.TB, stores ...reference.Store) (bases []string, effectsURL string) {
	t.Helper()
	demo := reference.NewDemo(engine(t, nil).Policy())
	for _, s := range stores {
		srv := httptest.NewServer(engine(t, nil, reference.WithStore(s)).Middleware(demo))
		t.Cleanup(srv.Close)
		bases = append(bases, srv.URL)
	}
	return bases, bases[0] + reference.EffectsPath
}

// probeReplicas runs every probe against replicas, spreading duplicates
// over them, and checks CF18 ended with want.
func probeReplicas(t testing.TB, bases []string, effectsURL string, want Status) *Report {
	t.Helper()
	rep := probeTarget(t, Config{Targets: bases, EffectsURL: effectsURL})
	if got := result(t, rep, "CF18"); got.Status != want {
		t.Errorf("CF18 %s, want %s: %s%s", got.Status, want, got.Got, describe(rep))
	}
	return rep
}

// Replicas on one shared store are one service: every probe passes but
// CF19, skipped without an origin.
func TestReplicasOnOneStore(t *testing.T) {
	t.Parallel()
	shared := reference.NewMemoryStore(reference.MemoryOptions{})
	bases, effects := serveReplicas(t, shared, shared, shared)
	rep := probeReplicas(t, bases, effects, Pass)
	if failed, skipped := ids(rep, Fail), ids(rep, Skip); failed != nil || !slices.Equal(skipped, []string{"CF19"}) {
		t.Errorf("failed %v, skipped %v:%s", failed, skipped, describe(rep))
	}
}

// Replicas on separate stores (the shared-store issue): a key completed
// on one replica executes again on the next. CF18 fails, and so does
// every probe that sends a duplicate to another replica; those that need
// a replay seen cannot be judged.
func TestReplicasOnSeparateStores(t *testing.T) {
	t.Parallel()
	bases, effects := serveReplicas(t, reference.NewMemoryStore(reference.MemoryOptions{}), reference.NewMemoryStore(reference.MemoryOptions{}))
	rep := probeReplicas(t, bases, effects, Fail)
	wantFail := []string{"CF03", "CF05", "CF06", "CF07", "CF10", "CF12", "CF16", "CF18"}
	if diff := cmp.Diff(wantFail, ids(rep, Fail)); diff != "" {
		t.Errorf("failing probes (-want +got):\n%s%s", diff, describe(rep))
	}
	if got, want := result(t, rep, "CF05").Got, "a re-execution (a new body); the effects counter grew by 2, 1 expected"; !strings.Contains(got, want) {
		t.Errorf("CF05 got %q, want %q in it", got, want)
	}
	if diff := cmp.Diff([]string{"CF11", "CF13", "CF17", "CF19"}, ids(rep, Skip)); diff != "" {
		t.Errorf("skipped probes (-want +got):\n%s", diff)
	}
}

// TestReplicasJudgedOnExecutionsOnly: a replica that answers every write
// 503 breaks the replay and inflight policies, which is CF07's concern,
// but executes nothing: CF18 passes. Without an effects counter it says
// that it did not count the 503s as executions; with one, the counter
// decides.
func TestReplicasJudgedOnExecutionsOnly(t *testing.T) {
	t.Parallel()
	shared := reference.NewMemoryStore(reference.MemoryOptions{})
	demo := reference.NewDemo(engine(t, nil).Policy())
	replica := engine(t, nil, reference.WithStore(shared)).Middleware(demo)
	good := httptest.NewServer(replica)
	t.Cleanup(good.Close)
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			replica.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"status":503,"title":"Service Unavailable","error_code":"busy"}`))
	}))
	t.Cleanup(busy.Close)
	for _, effects := range []string{"", good.URL + reference.EffectsPath} {
		rep := probeTarget(t, Config{Targets: []string{good.URL, busy.URL}, EffectsURL: effects})
		cf18 := result(t, rep, "CF18")
		if cf18.Status != Pass {
			t.Errorf("effects URL %q: CF18 %s: %s", effects, cf18.Status, cf18.Got)
		}
		if got := result(t, rep, "CF07").Status; got != Fail {
			t.Errorf("effects URL %q: CF07 %s, want fail: the 503s break the inflight policy", effects, got)
		}
		counted := !strings.Contains(cf18.Note, "non-2xx answer(s) not counted as executions: without an effects counter")
		if counted != (effects != "") {
			t.Errorf("effects URL %q: CF18 note %q", effects, cf18.Note)
		}
	}
}

// TestScopeProbesNameTheirLimit: a pass of CF13 and CF17 is about the
// target alone, and says so, naming the header the hops in front must
// forward.
func TestScopeProbesNameTheirLimit(t *testing.T) {
	t.Parallel()
	rep := probeTarget(t, Config{Targets: []string{serveEngine(t, engine(t, nil), nil)}})
	for id, header := range map[string]string{"CF13": "x-tenant-id", "CF17": "x-actor-id"} {
		res := result(t, rep, id)
		if want := "it says nothing about the hops in front of it, which must forward " + header + " unchanged"; res.Status != Pass || !strings.Contains(res.Note, want) {
			t.Errorf("%s %s, note %q; want a pass noting %q", id, res.Status, res.Note, want)
		}
	}
}
