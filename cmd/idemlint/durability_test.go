package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// TestServeWarnsOfVolatileRedis: the tests' Redis keeps no append-only
// file, so serve warns at start, in the log and on /_health; the memory
// store has nothing to warn of.
func TestServeWarnsOfVolatileRedis(t *testing.T) {
	s := startServe(t, "--policy", servePolicy, "--store", testserver.StartRedis(t).DatabaseURL(t))
	status, warnings := health(t, s)
	if status != "warn" || len(warnings) != 1 || !strings.Contains(warnings[0], "Redis persists nothing") {
		t.Errorf("/_health on a Redis without persistence: %s %q, want one warning that it persists nothing", status, warnings)
	}
	if want := `level=WARN msg="idempotency store: records can be lost" warning="Redis persists nothing`; !strings.Contains(s.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, s.stderr)
	}
	if status, warnings := health(t, startServe(t, "--policy", servePolicy)); status != "ok" || len(warnings) != 0 {
		t.Errorf("/_health on the memory store: %s %q, want ok", status, warnings)
	}
}

// TestServeWarnsOfAsyncPostgres: the tests' PostgreSQL runs with fsync
// and synchronous_commit off, and serve says so on /_health.
func TestServeWarnsOfAsyncPostgres(t *testing.T) {
	s := startServe(t, "--policy", servePolicy, "--store", testserver.StartPostgres(t).DatabaseURL(t))
	if status, warnings := health(t, s); status != "warn" || len(warnings) != 2 {
		t.Errorf("/_health on PostgreSQL without fsync: %s %q, want two warnings", status, warnings)
	}
}

// health reads s's /_health.
func health(t *testing.T, s *serveRun) (status string, warnings []string) {
	t.Helper()
	r := s.send(t, "GET", "/_health", "", "")
	var h struct {
		Status   string
		Warnings []string
	}
	if err := json.Unmarshal([]byte(r.body), &h); r.status != 200 || err != nil {
		t.Fatalf("/_health: %d %s (%v)", r.status, r.body, err)
	}
	return h.Status, h.Warnings
}
