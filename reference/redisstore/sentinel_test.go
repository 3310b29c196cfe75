package redisstore_test

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/redisstore"
	"github.com/idemlint/idemlint/reference/storetest"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// replicationLag is how far behind its master the lagging replica of
// the Sentinel tests runs: the stream a replica had not received when
// its master died, in the runs that found keys executed twice.
const replicationLag = 500 * time.Millisecond

// TestSentinelFailoverWithLaggingReplica: a master behind Sentinel,
// whose two replicas receive the replication stream half a second late,
// is killed (SIGKILL) under load; Sentinel promotes a replica and points
// the other at it. The store waits for a replica to acknowledge each
// create and finish, so no record the promoted replica lacks was ever
// acted on, and no key runs twice. (Without the wait, the keys first
// sent in the last half second before the kill run twice:
// TestSentinelFailoverUnacknowledged measures them.)
func TestSentinelFailoverWithLaggingReplica(t *testing.T) {
	res := sentinelFailover(t, "")
	if len(res.Doubles) > 0 {
		t.Errorf("%d of %d keys executed twice across the failover, waiting for the replica: %q", len(res.Doubles), res.Keys, res.Doubles)
	}
}

// MeasureEnv names the environment variable that, set to 1, runs the
// measurements that assert nothing (TestSentinelFailoverUnacknowledged).
const measureEnv = "IDEMLINT_MEASURE"

// TestSentinelFailoverUnacknowledged measures, for README, the keys
// that run twice in TestSentinelFailoverWithLaggingReplica's failover
// when the store waits for no replica (wait_replicas=-1). It asserts
// nothing, and runs only with IDEMLINT_MEASURE=1.
//
//	IDEMLINT_MEASURE=1 go test -count=1 -v -run 'SentinelFailover' ./reference/redisstore/
func TestSentinelFailoverUnacknowledged(t *testing.T) {
	if os.Getenv(measureEnv) != "1" {
		t.Skip("a measurement; set " + measureEnv + "=1 to run it")
	}
	sentinelFailover(t, "&wait_replicas=-1")
}

// sentinelFailover runs the load through a store opened by Sentinel with
// the URL parameters params, killing the master a second and a half in.
func sentinelFailover(t *testing.T, params string) storetest.LoadResult {
	const name = "idemlint"
	master := testserver.StartRedisNode(t)
	for range 2 {
		proxy := startLagProxy(t, master.Addr, replicationLag)
		testserver.StartRedisNode(t, "--replicaof", strings.Replace(proxy, ":", " ", 1))
	}
	waitReplicas(t, master, 2)
	sentinel := testserver.StartSentinel(t, name, master)
	waitSentinel(t, sentinel, func(report string) bool { return strings.Contains(report, "address="+master.Addr+",slaves=2") })
	url := "redis://" + sentinel.Addr + "?master_set=" + name + params
	open := func() reference.Store {
		s, err := redisstore.Open(url, redisstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	var promoted time.Duration
	res := storetest.Load(t, open, 5*time.Second, 1500*time.Millisecond, func() {
		killed := time.Now()
		master.Kill()
		report := waitSentinel(t, sentinel, func(report string) bool { return !strings.Contains(report, "address="+master.Addr+",") })
		promoted = time.Since(killed)
		_, addr, _ := strings.Cut(report, "address=")
		addr, _, _ = strings.Cut(addr, ",")
		// The other replica, which Sentinel points at the new master.
		waitReplicas(t, &testserver.RedisNode{Addr: addr}, 1)
	})
	t.Logf("%d keys, the master killed (its replicas %v behind, one promoted %v later), URL parameters %q: %d executed twice, %d answers of 503 retried, %d leases lapsed",
		res.Keys, replicationLag, promoted.Round(100*time.Millisecond), params, len(res.Doubles), res.Refused, res.Lapses)
	return res
}

// sentinelWait bounds the waits for Sentinel: twice the longest its
// timings let a failover take, a margin for a loaded machine.
const sentinelWait = 2 * testserver.SentinelFailoverBound

// waitSentinel waits until the Sentinel's report of its master (INFO
// sentinel's master0) satisfies done, and returns it. A failover
// Sentinel aborted fails the test at once: it tries again only after
// twice its failover timeout.
func waitSentinel(t *testing.T, sentinel *testserver.RedisNode, done func(report string) bool) string {
	t.Helper()
	start := time.Now()
	for deadline := start.Add(sentinelWait); ; time.Sleep(50 * time.Millisecond) {
		info, err := sentinel.Info("sentinel")
		if err == nil && done(info["master0"]) {
			return info["master0"]
		}
		if log := sentinel.Log(); strings.Contains(log, "-failover-abort") || time.Now().After(deadline) {
			t.Fatalf("Sentinel reports %q (%v) after %v; its log:\n%s", info["master0"], err, time.Since(start).Round(time.Second), log)
		}
	}
}

// startLagProxy forwards the TCP connections it accepts on a port of
// 127.0.0.1 to upstream, and returns its address. What upstream sends
// reaches the client lag late; what the client sends passes at once.
// When upstream's side ends, what was held back is dropped, as a
// replica loses the stream its master had sent but it had not received
// when the master died.
func startLagProxy(t *testing.T, upstream string, lag time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	t.Cleanup(func() { l.Close(); conns.Wait() })
	go func() {
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", upstream)
			if err != nil {
				client.Close()
				continue
			}
			conns.Go(func() { relayLate(client, server, lag) })
		}
	}()
	return l.Addr().String()
}

// relayLate relays between client and server until either ends, server
// to client lag late.
func relayLate(client, server net.Conn, lag time.Duration) {
	defer client.Close()
	defer server.Close()
	go func() { _, _ = io.Copy(server, client) }()
	type chunk struct {
		due  time.Time
		data []byte
	}
	chunks := make(chan chunk, 1<<16)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			buf := make([]byte, 32<<10)
			n, err := server.Read(buf)
			if n > 0 {
				chunks <- chunk{time.Now().Add(lag), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case <-ended:
			return // what is held back is lost
		case c := <-chunks:
			select {
			case <-ended:
				return
			case <-time.After(time.Until(c.due)):
			}
			if _, err := client.Write(c.data); err != nil && !errors.Is(err, net.ErrClosed) {
				return
			}
		}
	}
}
