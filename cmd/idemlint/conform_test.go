package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// conformDoc is the part of conform's json document the tests read.
type conformDoc struct {
	Origin         string
	PolicyFindings []struct{ Rule, Severity string } `json:"policy_findings"`
	Probes         []struct {
		ID, Status, Expected, Got, Reason string
	}
	Summary struct{ Probes, Passed, Failed, Skipped, Requests int }
}

func runConformJSON(t *testing.T, args ...string) (conformDoc, int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"conform", "-f", "json"}, args...), &stdout, &stderr)
	var doc conformDoc
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("stdout is no JSON document (%v):\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	return doc, code, stderr.String()
}

func statuses(doc conformDoc, want string) []string {
	var ids []string
	for _, p := range doc.Probes {
		if p.Status == want {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// TestConformAgainstServe runs every probe, counting executions, against
// the reference engine served over HTTP: all of them pass but CF18, which
// needs several targets, and CF19, which needs --origin. The text output keeps within 100 columns.
func TestConformAgainstServe(t *testing.T) {
	s := startServe(t, "--policy", servePolicy)
	var stdout, stderr bytes.Buffer
	code := run([]string{"conform", "--policy", servePolicy, "--target", s.base, "--effects-url", s.base + "/_effects"}, &stdout, &stderr)
	if code != exitOK || stderr.Len() > 0 {
		t.Fatalf("conform exited %d; stderr:\n%s\nstdout:\n%s", code, &stderr, &stdout)
	}
	var passed []string
	for line := range strings.Lines(stdout.String()) {
		if n := utf8.RuneCountInString(strings.TrimSuffix(line, "\n")); n > 100 {
			t.Errorf("a line of %d characters: %s", n, line)
		}
		if id, ok := strings.CutPrefix(line, "PASS "); ok {
			passed = append(passed, strings.Fields(id)[0])
		}
	}
	want := []string{"CF01", "CF02", "CF03", "CF04", "CF05", "CF06", "CF07", "CF08", "CF09", "CF10", "CF11", "CF12", "CF13", "CF14", "CF15", "CF16", "CF17"}
	if diff := cmp.Diff(want, passed); diff != "" {
		t.Errorf("passing probes (-want +got):\n%s\n%s", diff, &stdout)
	}
	if !strings.Contains(stdout.String(), "\n19 probes: 17 passed, 0 failed, 2 skipped (") {
		t.Errorf("summary:\n%s", &stdout)
	}
	if !strings.Contains(stdout.String(), "\n     skipped: no --origin: give the origin the browser front end is served from to probe its CORS\n") {
		t.Errorf("CF19's skip reason:\n%s", &stdout)
	}
}

// With --origin, CF19 preflights the target: serve answers no preflight,
// so CF19 fails and conform exits 1; the json document names the origin.
func TestConformOrigin(t *testing.T) {
	s := startServe(t, "--policy", servePolicy)
	doc, code, stderr := runConformJSON(t, "--policy", servePolicy, "--target", s.base, "--origin", "https://app.example")
	if code != exitFindings {
		t.Fatalf("conform exited %d, want %d; stderr:\n%s", code, exitFindings, stderr)
	}
	if diff := cmp.Diff([]string{"CF19"}, statuses(doc, "fail")); diff != "" {
		t.Errorf("failing probes (-want +got):\n%s", diff)
	}
	if doc.Origin != "https://app.example" || !strings.Contains(stderr, ", origin https://app.example") {
		t.Errorf("origin %q; stderr:\n%s", doc.Origin, stderr)
	}
}

// Two serve replicas, each with its own memory store, are no one service:
// a key completed on one is executed again on the other. CF18 sees it.
func TestConformReplicasOnSeparateStores(t *testing.T) {
	a, b := startServe(t, "--policy", servePolicy), startServe(t, "--policy", servePolicy)
	doc, code, stderr := runConformJSON(t, "--policy", servePolicy, "--target", a.base, "--target", b.base)
	if code != exitFindings {
		t.Fatalf("conform exited %d, want %d; stderr:\n%s", code, exitFindings, stderr)
	}
	for _, p := range doc.Probes {
		if p.ID == "CF18" && (p.Status != "fail" || !strings.Contains(p.Got, "another body")) {
			t.Errorf("CF18 %s: %s", p.Status, p.Got)
		}
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

	doc, code, stderr := runConformJSON(t, "--policy", policy, "--target", s.base, "--header-env", "CONFORM_AUTH", "--verbose")
	if code != exitFindings {
		t.Fatalf("conform exited %d, want %d; stderr:\n%s", code, exitFindings, stderr)
	}
	if strings.Contains(stderr, "env-s3cret") {
		t.Errorf("the secret shows in the output:\n%s", stderr)
	}
	if !strings.Contains(stderr, "extra headers Authorization: <redacted>") || !strings.Contains(stderr, "CF01 POST /orders -> 400 Bad Request") ||
		!strings.Contains(stderr, "     > Authorization: <redacted>\n") {
		t.Errorf("stderr lacks the bounds or the request log:\n%s", stderr)
	}
	// CF15's malformed keys get on_missing too: the same mismatch.
	if diff := cmp.Diff([]string{"CF01", "CF15"}, statuses(doc, "fail")); diff != "" {
		t.Fatalf("failing probes (-want +got):\n%s", diff)
	}
	want := `428 with error_code "idempotency_key_required" (on_missing) / 400 Bad Request, error_code "idempotency_key_required"`
	if got := doc.Probes[0].Expected + " / " + doc.Probes[0].Got; got != want {
		t.Errorf("CF01 expected / got:\n%s\nwant:\n%s", got, want)
	}
}

// A policy as a library builds it, with lint errors, is probed as written:
// its findings are notes, the probes it makes inapplicable are skipped.
func TestConformProbesPolicyAsWritten(t *testing.T) {
	s := startServe(t, "--policy", servePolicy)
	policy := servePolicyWith(t, func(p map[string]any) {
		p["idempotency_scope"] = []any{"service", "tenant_id", "actor_id", "fingerprint", "idempotency_key"}
		delete(p, "observability")
	})
	doc, code, stderr := runConformJSON(t, "--policy", policy, "--target", s.base)
	if code != exitOK {
		t.Fatalf("conform exited %d; stderr:\n%s", code, stderr)
	}
	var rules []string
	for _, f := range doc.PolicyFindings {
		rules = append(rules, f.Rule+" "+f.Severity)
	}
	if diff := cmp.Diff([]string{"IDL112 warning", "IDL107 error", "IDL113 warning"}, rules); diff != "" {
		t.Errorf("policy findings (-want +got):\n%s", diff)
	}
	if !strings.Contains(stderr, "note: the policy as written: "+policy+":1:") {
		t.Errorf("stderr shows no finding as a note:\n%s", stderr)
	}
	if diff := cmp.Diff([]string{"CF08", "CF18", "CF19"}, statuses(doc, "skip")); diff != "" {
		t.Errorf("skipped probes (-want +got):\n%s", diff)
	}
}
