package conform

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// shippedPolicies are the policy documents of the valid fixture sets and
// of the reference engine's tests.
func shippedPolicies(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, pattern := range []string{"../../fixtures/valid/*/*.json", "../testdata/*.json", "testdata/*.json"} {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range matches {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if doc, _, _ := boundary.Parse(path, src); doc != nil && doc.Policy != nil {
				paths = append(paths, path)
			}
		}
	}
	if len(paths) < 4 {
		t.Fatalf("found only %d policies: %q", len(paths), paths)
	}
	return paths
}

// The reference engine is the executable form of a policy, so every probe
// passes against it, or is skipped where the policy makes it
// inapplicable.
func TestReferencePassesShippedPolicies(t *testing.T) {
	for _, path := range shippedPolicies(t) {
		t.Run(path, func(t *testing.T) {
			e, err := reference.Load(path, quiet)
			if err != nil {
				t.Fatal(err)
			}
			rep := probeInProcess(t, e)
			if failed := ids(rep, Fail); failed != nil {
				t.Errorf("failed %v:%s", failed, describe(rep))
			}
			if diff := cmp.Diff(inapplicable(e.Policy()), ids(rep, Skip)); diff != "" {
				t.Errorf("skipped probes (-want +got):\n%s", diff)
			}
		})
	}
}

// inapplicable lists the probes a shipped policy makes inapplicable.
func inapplicable(p *boundary.Policy) []string {
	var stateChanging, readOnly int
	for i := range p.Operations.Items {
		op := &p.Operations.Items[i]
		if op.StateChanging {
			stateChanging++
		} else if !p.Idempotency.Requires(op) {
			readOnly++
		}
	}
	var skip []string
	if !p.Idempotency.EchoKeyHeader.Value {
		skip = append(skip, "CF04")
	}
	if p.Fingerprint.Canonicalization.Value != "canonical_json" {
		skip = append(skip, "CF06")
	}
	if stateChanging < 2 {
		skip = append(skip, "CF08")
	}
	if readOnly == 0 {
		skip = append(skip, "CF09")
	}
	if p.Replay.ReplayedHeader.Value == "" {
		skip = append(skip, "CF16")
	}
	return append(skip, "CF18", "CF19") // one target, in process

}

func probeInProcess(t *testing.T, e *reference.Engine) *Report {
	t.Helper()
	cfg := Config{Policy: e.Policy()}
	cfg.Handler, cfg.Effects = InProcess(e)
	return probeTarget(t, cfg)
}

// Policies that make probes inapplicable, or choose the other answers the
// spec allows: each still passes against the engine, skipping exactly the
// probes it must. With overlap, CF07's attempt waits until a duplicate
// found it running (burstGate), and some duplicate must have got the
// inflight answer wantInflight.
func TestReferencePolicyVariants(t *testing.T) {
	for _, tt := range []struct {
		name         string
		edit         func(doc map[string]any)
		overlap      bool
		wantInflight string   // an answer CF07 must have seen, in the verbose log
		wantSkip     []string // besides CF18 (several targets) and CF19 (a target)
	}{
		{
			name:    "inflight wait", // the duplicates wait, then replay
			overlap: true,
		},
		{
			name: "inflight reject with 409",
			edit: func(doc map[string]any) {
				doc["idempotency_inflight"] = map[string]any{"policy": "reject", "status": 409}
			},
			overlap:      true,
			wantInflight: `409 Conflict, error_code "idempotency_request_in_progress"`,
		},
		{
			// A 202 rejection is told from the operation's own 2xx by its
			// error_code.
			name: "inflight reject with 202",
			edit: func(doc map[string]any) {
				doc["idempotency_inflight"] = map[string]any{"policy": "reject", "status": 202}
			},
			overlap:      true,
			wantInflight: `202 Accepted, error_code "idempotency_request_in_progress"`,
		},
		{
			name: "no replayed header, no echo, raw bytes, reexecute",
			edit: func(doc map[string]any) {
				delete(section(doc, "idempotency_replay"), "replayed_header")
				section(doc, "idempotency_replay")["on_failed"] = "reexecute"
				section(doc, "http_idempotency")["echo_key_header"] = false
				section(doc, "idempotency_fingerprint")["canonicalization"] = "raw_bytes"
			},
			wantSkip: []string{"CF04", "CF06", "CF16", "CF18", "CF19"},
		},
		{
			// Stripe: the operation sends forms; CF06 reorders its pairs,
			// and CF10 has no JSON type to change.
			name: "form bodies",
			edit: func(doc map[string]any) {
				section(doc, "idempotency_fingerprint")["canonicalization"] = map[string]any{
					"application/json": "canonical_json", "application/x-www-form-urlencoded": "canonical_form"}
				op := doc["operations"].([]any)[0].(map[string]any)
				op["example"] = map[string]any{"body": map[string]any{"amount": 2000, "currency": "usd", "metadata": map[string]any{"order_id": "6735"}},
					"headers": map[string]any{"Content-Type": "application/x-www-form-urlencoded"}}
			},
			wantSkip: []string{"CF10", "CF18", "CF19"},
		},
		{
			name: "forms read as raw bytes",
			edit: func(doc map[string]any) {
				section(doc, "idempotency_fingerprint")["canonicalization"] = map[string]any{
					"application/json": "canonical_json", "application/x-www-form-urlencoded": "raw_bytes"}
				op := doc["operations"].([]any)[0].(map[string]any)
				op["example"] = map[string]any{"headers": map[string]any{"Content-Type": "application/x-www-form-urlencoded"}}
			},
			wantSkip: []string{"CF06", "CF10", "CF18", "CF19"},
		},
		{
			name: "one operation, no on_missing",
			edit: func(doc map[string]any) {
				doc["operations"] = doc["operations"].([]any)[:1]
				delete(section(doc, "http_idempotency"), "on_missing")
			},
			wantSkip: []string{"CF01", "CF08", "CF09", "CF15", "CF18", "CF19"},
		},
		{
			name: "keys required by operation, not by method",
			edit: func(doc map[string]any) {
				section(doc, "http_idempotency")["require_key"] = map[string]any{"operations": []any{"orders.cancel"}}
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var gate *burstGate
			var opts []reference.Option
			if tt.overlap {
				gate = &burstGate{}
				opts = append(opts, reference.WithStore(gatedStore{reference.NewMemoryStore(reference.MemoryOptions{}), gate}))
			}
			e := engine(t, tt.edit, opts...)
			demo := reference.NewDemo(e.Policy())
			var log strings.Builder
			rep := probeTargetWith(t, Config{Policy: e.Policy(), Handler: e.Middleware(demo), Effects: demo.Effects, Verbose: &log}, gate)
			if failed := ids(rep, Fail); failed != nil {
				t.Errorf("failed %v:%s", failed, describe(rep))
			}
			if tt.wantSkip == nil {
				tt.wantSkip = []string{"CF18", "CF19"}
			}
			if diff := cmp.Diff(tt.wantSkip, ids(rep, Skip)); diff != "" {
				t.Errorf("skipped probes (-want +got):\n%s", diff)
			}
			if tt.wantInflight != "" && !slices.ContainsFunc(strings.Split(log.String(), "\n"), func(line string) bool {
				return strings.HasPrefix(line, "CF07 ") && strings.Contains(line, "-> "+tt.wantInflight)
			}) {
				t.Errorf("no CF07 request got %s; log:\n%s", tt.wantInflight, log.String())
			}
		})
	}
}

// A run whose context is cancelled sends nothing and says why each probe
// did not run.
func TestInProcessCancelled(t *testing.T) {
	e := engine(t, nil)
	cfg := Config{Policy: e.Policy()}
	cfg.Handler, cfg.Effects = InProcess(e)
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := r.Run(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 0 || len(ids(rep, Fail)) != len(probes)-2 {
		t.Errorf("%d requests, failures %v; want none sent and every probe but CF18 (one target) and CF19 (in process) failed", rep.Requests, ids(rep, Fail))
	}
	if got := result(t, rep, "CF01").Got; got != "not run: interrupted" {
		t.Errorf("CF01 got %q", got)
	}
}
