package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// Replicas are server processes (the test binary, which TestMain runs as
// Run) on one shared store, so that one can be killed with SIGKILL.

// replicaLeaseMS is the lease of the replicas' policy: short, so that a
// takeover after a crash is quick to test.
const replicaLeaseMS = 1000

// replicaConfig is serve's defaults on the test policy with a short
// lease, on store, listening on a free port of 127.0.0.1.
func replicaConfig(t *testing.T, store string) Config {
	t.Helper()
	c := DefaultConfig()
	c.Addr, c.Store = "127.0.0.1:0", store
	c.Policy = policyWith(t, func(doc map[string]any) {
		doc["idempotency_inflight"] = map[string]any{"policy": "wait", "status": 409, "wait_timeout_ms": 10000, "lease_ms": replicaLeaseMS}
	})
	return c
}

type replica struct {
	cmd  *exec.Cmd
	base string
}

// startReplicas starts n server processes running c, stopped (SIGTERM)
// when the test ends.
func startReplicas(t *testing.T, n int, c Config) []*replica {
	t.Helper()
	reps := make([]*replica, n)
	for i := range reps {
		r := &replica{}
		r.cmd, r.base = startProcess(t, c, io.Discard)
		reps[i] = r
	}
	return reps
}

var replicaClient = &http.Client{Timeout: 30 * time.Second}

type answer struct {
	status   int
	body     string
	replayed bool
	err      error
}

func (r *replica) post(key, body string) answer {
	req, err := http.NewRequest(http.MethodPost, r.base+"/orders", strings.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("X-Idempotency-Key", key)
	req.Header.Set("X-Tenant-Id", "tenant-a")
	resp, err := replicaClient.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, string(b), resp.Header.Get("Idempotent-Replayed") == "true", err}
}

func (r *replica) effects(t *testing.T) int {
	t.Helper()
	resp, err := replicaClient.Get(r.base + "/_effects")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct{ Count int }
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	return e.Count
}

func totalEffects(t *testing.T, reps []*replica) int {
	t.Helper()
	n := 0
	for _, r := range reps {
		n += r.effects(t)
	}
	return n
}

// Bounds of the concurrent-duplicates test.
const (
	replicaRounds     = 100
	replicaDuplicates = 64
)

// leaseStats sums the replicas' lease lapses and takeovers, from
// /_health.
func leaseStats(t *testing.T, reps []*replica) (lapses, takeovers int64) {
	t.Helper()
	for _, r := range reps {
		resp, err := replicaClient.Get(r.base + "/_health")
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Lapses    *int64 `json:"lease_lapses"`
			Takeovers *int64 `json:"takeovers"`
		}
		err = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if err != nil || h.Lapses == nil || h.Takeovers == nil {
			t.Fatalf("/_health of %s: lease_lapses %v, takeovers %v (%v)", r.base, h.Lapses, h.Takeovers, err)
		}
		lapses += *h.Lapses
		takeovers += *h.Takeovers
	}
	return lapses, takeovers
}

// testReplicasExecuteOnce: in each round, 64 concurrent duplicates of a
// fresh key spread round-robin over three replicas execute once, and all
// get that execution's answer. A machine that stalls a replica for its
// 1 s lease lets the lease lapse, and a duplicate then runs the key
// again by right: a second execution, or a differing answer, fails the
// test only where no replica counted a lapse.
func testReplicasExecuteOnce(t *testing.T, store string) {
	reps := startReplicas(t, 3, replicaConfig(t, store))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var differing []string
	for round := range replicaRounds {
		if ctx.Err() != nil {
			t.Fatalf("round %d: out of time", round)
		}
		key := fmt.Sprintf("round-%d-%s", round, rand.Text())
		body := fmt.Sprintf(`{"round": %d}`, round)
		var (
			wg      sync.WaitGroup
			answers [replicaDuplicates]answer
		)
		for i := range replicaDuplicates {
			wg.Go(func() { answers[i] = reps[i%len(reps)].post(key, body) })
		}
		wg.Wait()
		for i, a := range answers {
			if a.err != nil || a.status != http.StatusCreated {
				t.Fatalf("round %d, duplicate %d on replica %d: %d %q (%v); want 201", round, i, i%len(reps), a.status, a.body, a.err)
			}
			if a.body != answers[0].body {
				differing = append(differing, fmt.Sprintf("round %d, duplicate %d on replica %d: %q, duplicate 0 %q", round, i, i%len(reps), a.body, answers[0].body))
			}
		}
	}
	got := totalEffects(t, reps)
	lapses, takeovers := leaseStats(t, reps)
	switch {
	case lapses == 0 && (got != replicaRounds || len(differing) > 0):
		t.Errorf("%d executions over the replicas for %d keys, and %d answers differing from their round's first (%q), with no lease lapsed; want one execution per key", got, replicaRounds, len(differing), differing)
	case got > replicaRounds+int(lapses):
		t.Errorf("%d executions for %d keys: more extra ones than the %d leases that lapsed", got, replicaRounds, lapses)
	case lapses > 0:
		t.Logf("the machine stalled a replica past its lease: %d lapses, %d takeovers, %d executions for %d keys", lapses, takeovers, got, replicaRounds)
	}
}

// testTakeoverAfterKill: the replica running a slow attempt is killed;
// a retry to another replica after the lease executes once more, and
// later duplicates replay that execution.
func testTakeoverAfterKill(t *testing.T, store string) {
	c := replicaConfig(t, store)
	// The first replica's attempt must still run when the kill comes,
	// however late a loaded machine lets the test send it; the survivors
	// answer at once.
	stuck := c
	stuck.DemoDelay = time.Hour
	reps := append(startReplicas(t, 1, stuck), startReplicas(t, 2, c)...)
	const key, body = "killed-replica", `{"sku": "P1"}`
	go reps[0].post(key, body) // never answered: the replica dies
	deadline := time.Now().Add(30 * time.Second)
	for reps[0].effects(t) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first replica never started the attempt")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := reps[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = reps[0].cmd.Wait()
	survivors := reps[1:]

	time.Sleep(replicaLeaseMS * time.Millisecond)
	retry := survivors[0].post(key, body)
	if retry.err != nil || retry.status != http.StatusCreated || retry.replayed {
		t.Fatalf("retry after the lease: %d %q replayed %v (%v); want a new execution", retry.status, retry.body, retry.replayed, retry.err)
	}
	if got := totalEffects(t, survivors); got != 1 {
		t.Errorf("%d executions on the surviving replicas, want exactly 1", got)
	}
	for i, r := range []*replica{survivors[1], survivors[0]} {
		if dup := r.post(key, body); dup.status != http.StatusCreated || dup.body != retry.body || !dup.replayed {
			t.Errorf("duplicate %d: %d %q replayed %v (%v); want the retry's answer replayed", i, dup.status, dup.body, dup.replayed, dup.err)
		}
	}
	if got := totalEffects(t, survivors); got != 1 {
		t.Errorf("%d executions after the duplicates, want still 1", got)
	}
}

func TestReplicasOnRedis(t *testing.T) {
	redis := testserver.StartRedis(t)
	t.Run("ExecuteOnce", func(t *testing.T) { testReplicasExecuteOnce(t, redis.DatabaseURL(t)) })
	t.Run("TakeoverAfterKill", func(t *testing.T) { testTakeoverAfterKill(t, redis.DatabaseURL(t)) })
}

func TestReplicasOnPostgres(t *testing.T) {
	pg := testserver.StartPostgres(t)
	t.Run("ExecuteOnce", func(t *testing.T) { testReplicasExecuteOnce(t, pg.DatabaseURL(t)) })
	t.Run("TakeoverAfterKill", func(t *testing.T) { testTakeoverAfterKill(t, pg.DatabaseURL(t)) })
}

// TestReplicasOnRedisCluster: serve's replicas on a Redis Cluster of
// three masters, which they reach by one of them.
func TestReplicasOnRedisCluster(t *testing.T) {
	url := testserver.StartRedisCluster(t, 3, false).Masters[0].URL()
	t.Run("ExecuteOnce", func(t *testing.T) { testReplicasExecuteOnce(t, url) })
	t.Run("TakeoverAfterKill", func(t *testing.T) { testTakeoverAfterKill(t, url) })
}
