package testserver

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

func TestRedisAnswers(t *testing.T) {
	r := StartRedis(t)
	if err := redisPing(r.Socket); err != nil {
		t.Fatal(err)
	}
	if a, b := r.DatabaseURL(t), r.DatabaseURL(t); a == b || !strings.HasPrefix(a, "unix://"+r.Socket+"?db=") {
		t.Errorf("database URLs %q and %q", a, b)
	}
}

func TestPostgresAnswers(t *testing.T) {
	p := StartPostgres(t)
	url := p.DatabaseURL(t)
	out, err := exec.Command(postgresBin("psql"), "-X", "-At", url, "-c", "SELECT current_database(), current_user").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "test") || !strings.Contains(string(out), "|"+postgresUser) {
		t.Fatalf("psql %s: %v\n%s", url, err, out)
	}
}

// TestRedisCPU: the CPU time grows as the server works.
func TestRedisCPU(t *testing.T) {
	r := StartRedis(t)
	before, err := r.CPU()
	if err != nil {
		t.Fatal(err)
	}
	for range 500 {
		if err := redisPing(r.Socket); err != nil {
			t.Fatal(err)
		}
	}
	after, err := r.CPU()
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("CPU time %v after 500 connections and PINGs, %v before; want it to grow", after, before)
	}
}

// TestRedisCommands: each command counts once; Commands' own INFO does
// not.
func TestRedisCommands(t *testing.T) {
	r := StartRedis(t)
	before, err := r.Commands()
	if err != nil {
		t.Fatal(err)
	}
	const pings = 50
	for range pings {
		if err := redisPing(r.Socket); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.CPU(); err != nil {
		t.Fatal(err)
	}
	after, err := r.Commands()
	if err != nil {
		t.Fatal(err)
	}
	if after-before != pings {
		t.Errorf("%d commands counted for %d PINGs and INFO", after-before, pings)
	}
}

// TestPostgresCPU: the CPU time grows by what a backend spent, counted
// after its connection closed and it exited.
func TestPostgresCPU(t *testing.T) {
	p := StartPostgres(t)
	url := p.DatabaseURL(t)
	before, err := p.CPU()
	if err != nil {
		t.Fatal(err)
	}
	// Enough work for several ticks of the clock /proc counts in.
	if out, err := exec.Command(postgresBin("psql"), "-X", "-At", url, "-c", "SELECT count(*) FROM generate_series(1, 2000000)").CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	// The backend exits after psql has its answer, and its time reaches
	// the postmaster's count of waited-for children only once the
	// postmaster has reaped it: on a loaded machine, a while later.
	var after time.Duration
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if after, err = p.CPU(); err != nil {
			t.Fatal(err)
		}
		if after > before || time.Now().After(deadline) {
			break
		}
	}
	if after <= before {
		t.Errorf("CPU time %v after a query over 2,000,000 rows, %v before; want it to grow", after, before)
	}
}

// TestProcessCPU: a process's CPU time grows as it works.
func TestProcessCPU(t *testing.T) {
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// A second of work at most, many ticks of the clock /proc counts in.
	after := before
	for round := 0; after <= before && round < 1000; round++ {
		for i := range 1 << 20 {
			sink += i
		}
		if after, err = ProcessCPU(os.Getpid()); err != nil {
			t.Fatal(err)
		}
	}
	if after <= before {
		t.Errorf("CPU time %v after a billion additions, %v before; want it to grow", after, before)
	}
	if _, err := ProcessCPU(-1); err == nil {
		t.Error("ProcessCPU of no process succeeded")
	}
}

var sink int

// TestClusterJoinsPastAForgottenHandshake: a node stalled past the
// handshake timeout while the others MEET it (its event loop blocked,
// as by a write of nodes.conf on a busy disk) is forgotten by them for
// good, which left redis-cli --cluster create waiting without end;
// joinCluster meets it again and the cluster forms.
func TestClusterJoinsPastAForgottenHandshake(t *testing.T) {
	const handshakeTimeout = time.Second // the least Redis allows
	members := startClusterMembers(t, 3, handshakeTimeout)
	assignCluster(t, members)
	stalled, others := members[0], members[1:]
	if err := stalled.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stalled.Signal(syscall.SIGCONT) }()
	host, port, _ := net.SplitHostPort(stalled.Addr)
	for _, m := range others {
		if _, err := m.Command("CLUSTER", "MEET", host, port, stalled.bus); err != nil {
			t.Fatal(err)
		}
	}
	// The others forget the handshake once it times out: each then
	// knows itself alone.
	for deadline := time.Now().Add(30 * handshakeTimeout); ; time.Sleep(50 * time.Millisecond) {
		forgotten := true
		for _, m := range others {
			nodes, err := m.Command("CLUSTER", "NODES")
			forgotten = forgotten && err == nil && strings.Count(strings.TrimSpace(nodes), "\n") == 0
		}
		if forgotten {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the handshakes with the stalled node were not forgotten within %v", 30*handshakeTimeout)
		}
	}
	if err := stalled.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	joinCluster(t, members)
}

// TestSentinelFailsOverAfterAStall: a Sentinel whose timer is held up
// past its TILT trigger (2 s; as by a write of its file on a busy disk)
// just as its master dies still fails the master over within
// SentinelFailoverBound. With Sentinel's own TILT period (30 s) it acts
// on nothing for half a minute, and then finds the replica disconnected
// for too long to promote.
func TestSentinelFailsOverAfterAStall(t *testing.T) {
	master := StartRedisNode(t)
	host, port, _ := net.SplitHostPort(master.Addr)
	StartRedisNode(t, "--replicaof", host, port)
	sentinel := StartSentinel(t, "stall", master)
	waitReport := func(what string, done func(report string) bool) {
		t.Helper()
		for deadline := time.Now().Add(2 * SentinelFailoverBound); ; time.Sleep(50 * time.Millisecond) {
			info, err := sentinel.Info("sentinel")
			if err == nil && done(info["master0"]) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: Sentinel reports %q (%v) after %v; its log:\n%s", what, info["master0"], err, 2*SentinelFailoverBound, sentinel.Log())
			}
		}
	}
	waitReport("the replica", func(report string) bool {
		return strings.Contains(report, "status=ok,address="+master.Addr+",slaves=1")
	})
	if err := sentinel.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	master.Kill()
	time.Sleep(2500 * time.Millisecond) // the stall: longer than the TILT trigger
	if err := sentinel.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitReport("the failover", func(report string) bool { return report != "" && !strings.Contains(report, "address="+master.Addr+",") })
	if !strings.Contains(sentinel.Log(), "+tilt") {
		t.Errorf("the Sentinel did not enter TILT mode, which the test is about; its log:\n%s", sentinel.Log())
	}
}
