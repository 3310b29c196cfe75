package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// conformServeBudget is the time a full conform run against a local
// "idemlint serve" may take (the performance bound); it takes a
// few tens of milliseconds.
const conformServeBudget = 2 * time.Second

// TestConformAgainstServe runs every probe, counting executions, against
// the reference engine served over HTTP: all of them pass.
func TestConformAgainstServe(t *testing.T) {
	s := startServe(t, "--policy", servePolicy)
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run([]string{"conform", "--policy", servePolicy, "--target", s.base, "--effects-url", s.base + "/_effects"}, &stdout, &stderr)
	took := time.Since(start)
	t.Logf("a full conform run against idemlint serve took %s", took)
	if code != exitOK || stderr.Len() > 0 {
		t.Fatalf("conform exited %d; stderr:\n%s\nstdout:\n%s", code, &stderr, &stdout)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if want := "conform: 13 probes, at most 54 requests, concurrency 16, per-request timeout 5s (7s when it may wait on an attempt in flight), deadline 1m0s -> " +
		s.base + ", operation orders.create, effects counter " + s.base + "/_effects"; lines[0] != want {
		t.Errorf("first line:\n%s\nwant:\n%s", lines[0], want)
	}
	var ids []string
	for _, line := range lines[1 : len(lines)-1] {
		if !strings.HasPrefix(line, "PASS ") {
			t.Errorf("not a pass: %s", line)
		}
		ids = append(ids, strings.Fields(line)[1])
	}
	if diff := cmp.Diff([]string{"CF01", "CF02", "CF03", "CF04", "CF05", "CF06", "CF07", "CF08", "CF09", "CF10", "CF11", "CF12", "CF13"}, ids); diff != "" {
		t.Errorf("probes (-want +got):\n%s", diff)
	}
	if summary := lines[len(lines)-1]; !regexp.MustCompile(`^13 probes: 13 passed, 0 failed, 0 skipped \(54 requests, \d+\.\d\ds\)$`).MatchString(summary) {
		t.Errorf("summary %q", summary)
	}
	if took > conformServeBudget {
		t.Errorf("the run took %s, over the budget of %s", took, conformServeBudget)
	}
}

// A service that answers a keyless request otherwise than its policy says
// fails CF01, and conform exits 1; the JSON document says which probe and
// why, and an extra header's secret from the environment is shown
// nowhere.
func TestConformFindsAMismatch(t *testing.T) {
	s := startServe(t, "--policy", servePolicy)
	src, err := os.ReadFile(servePolicy)
	if err != nil {
		t.Fatal(err)
	}
	claimed := strings.Replace(string(src), `"on_missing": {"action": "reject", "status": 400`, `"on_missing": {"action": "reject", "status": 428`, 1)
	if claimed == string(src) {
		t.Fatal("the policy's on_missing is not where the test expects it")
	}
	policy := filepath.Join(t.TempDir(), "claimed.json")
	if err := os.WriteFile(policy, []byte(claimed), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONFORM_AUTH", "Authorization: Bearer env-s3cret")

	var stdout, stderr bytes.Buffer
	code := run([]string{"conform", "--policy", policy, "--target", s.base, "--header-env", "CONFORM_AUTH", "--format", "json", "--verbose"}, &stdout, &stderr)
	if code != exitFindings {
		t.Fatalf("conform exited %d, want %d; stderr:\n%s", code, exitFindings, &stderr)
	}
	if strings.Contains(stdout.String()+stderr.String(), "env-s3cret") {
		t.Errorf("the secret shows in the output:\n%s\n%s", &stdout, &stderr)
	}
	if !strings.Contains(stderr.String(), "extra headers Authorization: <redacted>") || !strings.Contains(stderr.String(), "CF01 POST /orders (no key, ") {
		t.Errorf("stderr lacks the bounds or the request log:\n%s", &stderr)
	}
	var doc struct {
		Probes []struct {
			ID, Status, Expected, Got string
		}
		Summary struct{ Failed int }
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, &stdout)
	}
	if doc.Summary.Failed != 1 || doc.Probes[0].ID != "CF01" || doc.Probes[0].Status != "fail" {
		t.Fatalf("want CF01 alone failed:\n%s", &stdout)
	}
	want := `428 with error_code "idempotency_key_required" (on_missing) / 400 Bad Request, error_code "idempotency_key_required"`
	if got := doc.Probes[0].Expected + " / " + doc.Probes[0].Got; got != want {
		t.Errorf("CF01 expected / got:\n%s\nwant:\n%s", got, want)
	}
}
