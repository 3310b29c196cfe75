package redisstore_test

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/redisstore"
	"github.com/idemlint/idemlint/reference/storetest"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// clusterOnce is the Redis Cluster of the tests that share one (3
// masters, no replicas): starting one takes a few seconds.
var (
	clusterOnce sync.Once
	cluster     *testserver.RedisCluster
)

// openOnCluster returns a store on the shared cluster whose keys no
// other store of the run shares.
func openOnCluster(t *testing.T, o redisstore.Options) *redisstore.Store {
	t.Helper()
	clusterOnce.Do(func() { cluster = testserver.StartRedisCluster(&sharedTB{t}, 3, false) })
	if cluster == nil {
		t.Fatal("the shared Redis Cluster did not start")
	}
	o.Prefix = "cluster" + strconv.FormatInt(stores.Add(1), 10) + ":"
	s, err := redisstore.Open(cluster.URL(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestConformanceOnCluster(t *testing.T) {
	storetest.Run(t, func(t *testing.T) reference.Store { return openOnCluster(t, redisstore.Options{}) })
}

// TestClusterSpreadsRecords: a record's keys share a slot, and records
// spread over every master.
func TestClusterSpreadsRecords(t *testing.T) {
	s := openOnCluster(t, redisstore.Options{})
	ctx := context.Background()
	for i := range 60 {
		rec, created, err := s.Create(ctx, "id"+strconv.Itoa(i), reference.Record{Key: "k"}, time.Minute)
		if err != nil || !created {
			t.Fatalf("Create: %v, %v", created, err)
		}
		if err := s.Finish(ctx, "id"+strconv.Itoa(i), rec.Token, reference.Completed, reference.Result{Response: reference.Response{Status: 201}}, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range cluster.Masters {
		if n, err := m.Command("DBSIZE"); err != nil || n == "0" {
			t.Errorf("master %s holds %s keys (%v); 60 records should reach every master", m.Addr, n, err)
		}
	}
}

// sharedTB lets a cluster that outlives the test that started it be
// started on that test's behalf: its cleanup is the test binary's end
// (Main stops every server).
type sharedTB struct{ *testing.T }

func (sharedTB) Cleanup(func()) {}

// TestOpenRefuses: what the store cannot serve correctly is refused at
// Open with a message saying why, never met later.
func TestOpenRefuses(t *testing.T) {
	master := testserver.StartRedisNode(t)
	replica := testserver.StartRedisNode(t, "--replicaof", strings.Replace(master.Addr, ":", " ", 1))
	for _, tt := range []struct {
		name, url string
		o         redisstore.Options
		want      string
	}{
		{"replica", replica.URL(), redisstore.Options{}, "is a replica"},
		{"brace in the prefix", master.URL(), redisstore.Options{Prefix: "app{1}:"}, "holds a brace"},
		{"more replicas than connected", master.URL() + "?wait_replicas=2", redisstore.Options{}, "waiting for 2 replicas, but a master has 1"},
		{"bad wait_replicas", master.URL() + "?wait_replicas=x", redisstore.Options{}, "wait_replicas"},
		{"bad wait_timeout", master.URL() + "?wait_timeout=0s", redisstore.Options{}, "wait_timeout"},
	} {
		if tt.name == "more replicas than connected" {
			waitReplicas(t, master, 1)
		}
		s, err := redisstore.Open(tt.url, tt.o)
		if err == nil {
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Open = %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
}

// waitReplicas waits until master has n replicas connected and in sync.
func waitReplicas(t *testing.T, master *testserver.RedisNode, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, err := master.Info("replication")
		if err == nil && info["connected_slaves"] == strconv.Itoa(n) && (n == 0 || strings.Contains(info["slave0"], "state=online")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("master %s: %v replicas connected after 30s (%v), want %d", master.Addr, info["connected_slaves"], err, n)
		}
	}
}

// TestReplicaAcknowledgement: with a replica connected the store waits
// for it by default; a create it does not acknowledge in time (the
// replica paused) is refused and released, a finish is refused so that
// the engine retries it, and once the replica answers both go through.
func TestReplicaAcknowledgement(t *testing.T) {
	master := testserver.StartRedisNode(t)
	replica := testserver.StartRedisNode(t, "--replicaof", strings.Replace(master.Addr, ":", " ", 1))
	waitReplicas(t, master, 1)
	// Two stores on the one master: what must be acknowledged goes through
	// one that waits long enough for a loaded machine; what must not,
	// while the replica is paused, through one that gives up soon. So no
	// verdict depends on how fast the machine is.
	open := func(timeout string) *redisstore.Store {
		s, err := redisstore.Open(master.URL()+"?wait_timeout="+timeout, redisstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	patient, hasty := open("30s"), open("200ms")
	if patient.Replicas() != 1 {
		t.Fatalf("the store waits for %d replicas, want 1 (the master has one)", patient.Replicas())
	}
	ctx := context.Background()
	rec, created, err := patient.Create(ctx, "finish", reference.Record{Key: "k"}, time.Minute)
	if err != nil || !created {
		t.Fatalf("Create with the replica up: %v, %v", created, err)
	}
	pause(t, replica)
	if _, _, err := hasty.Create(ctx, "create", reference.Record{Key: "k"}, time.Minute); !errors.Is(err, redisstore.ErrNotAcknowledged) {
		t.Errorf("Create with the replica paused = %v, want ErrNotAcknowledged", err)
	}
	res := reference.Result{Response: reference.Response{Status: 201}}
	if err := hasty.Finish(ctx, "finish", rec.Token, reference.Completed, res, time.Minute); !errors.Is(err, redisstore.ErrNotAcknowledged) {
		t.Errorf("Finish with the replica paused = %v, want ErrNotAcknowledged", err)
	}
	resume(t, replica)
	if _, found, err := patient.Get(ctx, "create"); err != nil || found {
		t.Errorf("the unacknowledged create left a record: %v, %v", found, err)
	}
	if _, created, err := patient.Create(ctx, "create", reference.Record{Key: "k"}, time.Minute); err != nil || !created {
		t.Errorf("Create once the replica answers: %v, %v", created, err)
	}
	// The retry finds the record finished by its own token: done, once
	// acknowledged.
	if err := patient.Finish(ctx, "finish", rec.Token, reference.Completed, res, time.Minute); !errors.Is(err, reference.ErrInvalidTransition) {
		t.Errorf("Finish retried once the replica answers = %v, want ErrInvalidTransition (finished already)", err)
	}
}

// pause stops a replica's process (SIGSTOP), so that it acknowledges
// nothing until resume.
func pause(t *testing.T, n *testserver.RedisNode) {
	t.Helper()
	if err := n.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Signal(syscall.SIGCONT) })
}

func resume(t *testing.T, n *testserver.RedisNode) {
	t.Helper()
	if err := n.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// TestClusterSlotMigration: slots move from one master to another
// (redis-cli --cluster reshard: MIGRATING, IMPORTING, MIGRATE, so that
// the client meets ASK and MOVED) under load, and no key runs twice.
func TestClusterSlotMigration(t *testing.T) {
	c := testserver.StartRedisCluster(t, 3, false)
	from, err := c.Masters[0].Command("CLUSTER", "MYID")
	if err != nil {
		t.Fatal(err)
	}
	to, err := c.Masters[1].Command("CLUSTER", "MYID")
	if err != nil {
		t.Fatal(err)
	}
	open := func() reference.Store {
		s, err := redisstore.Open(c.URL(), redisstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	res := storetest.Load(t, open, 4*time.Second, time.Second, func() {
		out, err := exec.Command("redis-cli", "--cluster", "reshard", c.Masters[0].Addr, "--cluster-from", from, "--cluster-to", to,
			"--cluster-slots", "1000", "--cluster-yes", "--cluster-pipeline", "10").CombinedOutput()
		if err != nil {
			t.Errorf("redis-cli --cluster reshard: %v\n%s", err, out)
		}
	})
	t.Logf("%d keys while 1000 slots moved: %d executed twice, %d answers of 503 retried", res.Keys, len(res.Doubles), res.Refused)
	if len(res.Doubles) > 0 {
		t.Errorf("%d keys executed twice across the slot migration: %q", len(res.Doubles), res.Doubles)
	}
}

// TestClusterFailover: a master of a cluster with replicas is killed
// (SIGKILL) under load, its replica takes over, and the killed master
// comes back as a replica; with the store waiting for a replica, no key
// runs twice.
func TestClusterFailover(t *testing.T) {
	c := testserver.StartRedisCluster(t, 3, true)
	open := func() reference.Store {
		s, err := redisstore.Open(c.URL(), redisstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Replicas() != 1 {
			t.Fatalf("the store waits for %d replicas, want 1: every master has one", s.Replicas())
		}
		t.Cleanup(s.Close)
		return s
	}
	var down time.Duration
	res := storetest.Load(t, open, 5*time.Second, time.Second, func() {
		killed := time.Now()
		c.Masters[0].Kill()
		for {
			info, err := c.Replicas[0].Info("replication")
			if err != nil {
				t.Errorf("the replica: %v", err)
				return
			}
			if info["role"] == "master" {
				break
			}
			if time.Since(killed) > 30*time.Second {
				t.Errorf("the replica was not promoted within 30s")
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		down = time.Since(killed)
		c.Masters[0].Restart(t)
		waitReplicas(t, c.Replicas[0], 1)
	})
	t.Logf("%d keys, a master killed (its replica promoted %v later): %d executed twice, %d answers of 503 retried, %d leases lapsed", res.Keys, down.Round(100*time.Millisecond), len(res.Doubles), res.Refused, res.Lapses)
	if len(res.Doubles) > 0 {
		t.Errorf("%d keys executed twice across the failover: %q", len(res.Doubles), res.Doubles)
	}
}
