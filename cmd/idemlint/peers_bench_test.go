package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// peerStartTimeout bounds how long a peer may take to listen.
const peerStartTimeout = 30 * time.Second

// BenchmarkRedisPeers loads "idemlint serve --store" on Redis and, on
// the same private Redis (one database each), the peers of
// reference/redisstore/peers, plus the server at $IDEMLINT_PEER_URL if
// set, with BenchmarkServe's loads. It loads them in turn, round after
// round ($IDEMLINT_PEER_ROUNDS, default 3), so that a busy machine slows
// them alike: compare servers within a round. Needs redis-server, node
// and the peers installed (cd reference/redisstore/peers && npm ci);
// without node or the peers it loads only serve and $IDEMLINT_PEER_URL,
// and skips when that is unset.
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
	targets := []benchTarget{
		{"serve", startServe(b, "--policy", servePolicy, "--store", redis.DatabaseURL(b)).base},
	}
	if missing != "" {
		b.Logf("%s: loading serve and %s only", missing, external)
	} else {
		for _, peer := range redisPeers {
			targets = append(targets, benchTarget{peer, startRedisPeer(b, peer, redis.DatabaseURL(b))})
		}
	}
	if external != "" {
		targets = append(targets, benchTarget{"peer-url", strings.TrimSuffix(external, "/")})
	}
	for round := 1; round <= rounds; round++ {
		for _, t := range targets {
			for _, load := range benchLoads {
				b.Run(fmt.Sprintf("round%d/%s/%s", round, t.name, load.name), func(b *testing.B) { load.run(b, t.base) })
			}
		}
	}
}

// benchTarget is a server under load, by name.
type benchTarget struct{ name, base string }

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

// startRedisPeer runs "node server.js peer redisURL" until the benchmark
// ends and returns its base URL once it listens.
func startRedisPeer(b *testing.B, peer, redisURL string) string {
	b.Helper()
	logPath := filepath.Join(b.TempDir(), peer+".log")
	log, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command("node", "server.js", peer, redisURL)
	cmd.Dir = redisPeersDir
	cmd.Stderr = log
	// Killed with the benchmark should its cleanup never run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("starting the %s peer: %v", peer, err)
	}
	// Nothing of a peer is worth a graceful stop: Redis keeps the records.
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	first := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		first <- line
		_, _ = io.Copy(io.Discard, r) // so that the peer never blocks on a full pipe
	}()
	var line string
	select {
	case line = <-first:
	case <-time.After(peerStartTimeout):
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		msg, _ := os.ReadFile(logPath)
		b.Fatalf("the %s peer did not say where it listens within %v (first line %q); its stderr:\n%s", peer, peerStartTimeout, line, msg)
	}
	return base
}
