package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// Environment of BenchmarkRedisPeers.
const (
	// peerURLEnv names a running server to load beside the others, e.g.
	// one of the peers pointed at a Redis of your own.
	peerURLEnv = "IDEMLINT_PEER_URL"
	// peerRoundsEnv is how many times every server is loaded, in turn.
	peerRoundsEnv = "IDEMLINT_PEER_ROUNDS"
)

// defaultPeerRounds and maxPeerRounds bound peerRoundsEnv.
const (
	defaultPeerRounds = 3
	maxPeerRounds     = 20
)

// redisPeersDir holds server.js, other idempotency libraries on Redis in
// front of the demo's operation; "npm ci" there installs them.
const redisPeersDir = "../../reference/redisstore/peers"

// redisPeers are the libraries server.js serves.
var redisPeers = []string{"powertools", "node-idempotency", "express-idempotency"}

// BenchmarkRedisPeers loads "idemlint serve --store" on Redis and, on
// the same private Redis (one database each), the peers of
// reference/redisstore/peers, plus the server at $IDEMLINT_PEER_URL if
// set, with BenchmarkServe's loads; and serve on the memory store, whose
// records cost no round trip: the most any store could let serve do on
// the machine, against the same peers. It loads them in turn,
// round after round ($IDEMLINT_PEER_ROUNDS, default 3), so that a busy
// machine slows them alike: compare servers within a round. Every server
// it starts is a process of its own, serve as well as the peers, so that
// besides requests per second it reports the CPU time each server, Redis
// and the client (this process) spent per request, figures that a busy
// machine does not change much.
// Needs redis-server, node and the peers installed (cd
// reference/redisstore/peers && npm ci); without node or the peers it
// loads only serve and $IDEMLINT_PEER_URL, and skips when that is unset.
func BenchmarkRedisPeers(b *testing.B) {
	rounds, err := peerRounds()
	if err != nil {
		b.Fatal(err)
	}
	external := os.Getenv(peerURLEnv)
	missing := peersMissing()
	if missing != "" && external == "" {
		b.Skipf("%s; skipping (or set %s to a running server to compare)", missing, peerURLEnv)
	}
	redis := testserver.StartRedis(b)
	// The first serveTargets targets are serve's, the others its peers.
	const serveTargets = 2
	var targets []benchTarget
	for _, store := range []struct{ name, url string }{{"serve", redis.DatabaseURL(b)}, {"serve-memory", "memory"}} {
		targets = append(targets, startLogged(b, store.name, exec.Command("idemlint", "serve", "--addr", "127.0.0.1:0",
			"--policy", servePolicy, "--store", store.url)))
	}
	if missing != "" {
		b.Logf("%s: loading serve and %s only", missing, external)
	} else {
		for _, peer := range redisPeers {
			cmd := exec.Command("node", "server.js", peer, redis.DatabaseURL(b))
			cmd.Dir = redisPeersDir
			targets = append(targets, startLogged(b, peer, cmd))
		}
	}
	if external != "" {
		targets = append(targets, benchTarget{name: "peer-url", base: strings.TrimSuffix(external, "/")})
	}
	// perSecond[load][target][round-1]: requests per second of the last
	// run of each sub-benchmark, for the ratios to serve.
	perSecond := make([][][]float64, len(benchLoads))
	for l := range perSecond {
		perSecond[l] = make([][]float64, len(targets))
		for t := range perSecond[l] {
			perSecond[l][t] = make([]float64, rounds)
		}
	}
	for round := range rounds {
		for ti, t := range targets {
			for li, load := range benchLoads {
				b.Run(fmt.Sprintf("round%d/%s/%s", round+1, t.name, load.name), func(b *testing.B) {
					if t.cmd == nil { // not ours: neither its CPU nor its Redis is known
						perSecond[li][ti][round] = load.run(b, t.base).perSecond
						return
					}
					before := cpuOf(b, t.cmd.Process.Pid, redis)
					perSecond[li][ti][round] = load.run(b, t.base).perSecond
					after := cpuOf(b, t.cmd.Process.Pid, redis)
					for i, unit := range []string{"server-cpu-us/op", "redis-cpu-us/op", "client-cpu-us/op"} {
						b.ReportMetric(float64((after[i]-before[i]).Microseconds())/float64(b.N), unit)
					}
				})
			}
		}
	}
	for li, load := range benchLoads {
		for si := range serveTargets {
			for ti := si + 1; ti < len(targets); ti++ {
				ratios := make([]float64, rounds)
				for round := range ratios {
					ratios[round] = perSecond[li][si][round] / perSecond[li][ti][round]
				}
				b.Logf("%s: %s's requests per second over %s's, round by round: %s", load.name, targets[si].name, targets[ti].name, formatRatios(ratios))
			}
		}
	}
}

// formatRatios lists ratios, then their median.
func formatRatios(ratios []float64) string {
	var s strings.Builder
	for _, r := range ratios {
		fmt.Fprintf(&s, "%.2f ", r)
	}
	sorted := slices.Sorted(slices.Values(ratios))
	median := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		median = (sorted[len(sorted)/2-1] + median) / 2
	}
	fmt.Fprintf(&s, "(median %.2f)", median)
	return s.String()
}

// benchTarget is a server under load: its name, base URL and, when the
// benchmark started it, its process.
type benchTarget struct {
	name string
	base string
	cmd  *exec.Cmd
}

// startLogged starts a server process with its stderr in a file, not a
// pipe the benchmark would have to copy while it measures.
func startLogged(b *testing.B, name string, cmd *exec.Cmd) benchTarget {
	b.Helper()
	logPath := filepath.Join(b.TempDir(), name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	cmd.Stderr = log
	base := startListening(b, name, cmd, func() string {
		out, _ := os.ReadFile(logPath)
		return string(out)
	})
	return benchTarget{name: name, base: base, cmd: cmd}
}

// peerRounds reads peerRoundsEnv.
func peerRounds() (int, error) {
	v := os.Getenv(peerRoundsEnv)
	if v == "" {
		return defaultPeerRounds, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxPeerRounds {
		return 0, fmt.Errorf("%s=%q: want a whole number from 1 to %d", peerRoundsEnv, v, maxPeerRounds)
	}
	return n, nil
}

// peersMissing says what is missing to run the peers, "" when nothing.
func peersMissing() string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not installed"
	}
	if _, err := os.Stat(filepath.Join(redisPeersDir, "node_modules")); err != nil {
		return "the peers are not installed (cd reference/redisstore/peers && npm ci)"
	}
	return ""
}

// cpuOf returns the CPU time used so far by the server process pid, by
// Redis and by this process, the client.
func cpuOf(b *testing.B, pid int, redis *testserver.Redis) [3]time.Duration {
	b.Helper()
	store, err := redis.CPU()
	if err != nil {
		b.Fatal(err)
	}
	return [3]time.Duration{processCPU(b, pid), store, processCPU(b, os.Getpid())}
}

// clockTicks is Linux's USER_HZ, the unit of /proc/PID/stat's times: 100
// on every architecture Go supports.
const clockTicks = 100

// processCPU returns the user and system CPU time a process has used.
func processCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name, in parentheses, may hold spaces; utime and stime
	// are the 12th and 13th fields after it.
	_, rest, _ := strings.Cut(string(stat), ") ")
	fields := strings.Fields(rest)
	if len(fields) < 13 {
		b.Fatalf("/proc/%d/stat has %d fields after the name, want at least 13", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks
}
