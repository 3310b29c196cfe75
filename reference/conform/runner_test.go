package conform

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/checks/boundary"
	"github.com/idemlint/idemlint/checks/jsontree"
)

func TestNewRefuses(t *testing.T) {
	policy := engine(t, nil).Policy()
	array, _ := jsontree.Parse(`{"a": [1]}`)
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no policy", Config{Target: "http://x"}, "the policy is incomplete: take it from the reference engine (reference.Load), which refuses a policy it cannot run"},
		{"no target", Config{}, "no target: give the base URL of the service"},
		{"two targets", Config{Target: "http://x", Handler: http.NotFoundHandler()}, "probe either a target URL or an in-process handler, not both"},
		{"effects URL with handler", Config{Handler: http.NotFoundHandler(), EffectsURL: "http://x/_effects"}, "an in-process run counts executions with Effects, not an effects URL"},
		{"counter without handler", Config{Target: "http://x", Effects: func() int64 { return 0 }}, "an in-process effects counter needs an in-process handler"},
		{"not a URL", Config{Target: "http://[::1"}, `the target is not a URL: parse "http://[::1": missing ']' in host`},
		{"ftp", Config{Target: "ftp://user:pw@host/"}, "the target ftp://user:xxxxx@host/ must be an http or https URL"},
		{"no host", Config{Target: "http:///orders"}, "the target http:///orders has no host"},
		{"query", Config{Target: "http://host/?a=1"}, "the target http://host/?a=1 has a query; give the base URL the operation paths are appended to"},
		{"fragment", Config{Target: "http://host/#x"}, "the target http://host/#x has a fragment"},
		{"bad effects URL", Config{Target: "http://host", EffectsURL: "/_effects"}, "the effects URL /_effects must be an http or https URL"},
		{"concurrency 1", Config{Target: "http://x", Concurrency: 1}, "concurrency must be between 2 and 256, got 1"},
		{"concurrency 257", Config{Target: "http://x", Concurrency: 257}, "concurrency must be between 2 and 256, got 257"},
		{"negative timeout", Config{Target: "http://x", Timeout: -time.Second}, "the request timeout must be positive, got -1s"},
		{"negative deadline", Config{Target: "http://x", MaxDuration: -time.Second}, "the run deadline must be positive, got -1s"},
		{"body not an object", Config{Target: "http://x", Body: array.Get("a")}, "the probe body must be a JSON object: conform adds its probe fields to it"},
		{"key header", Config{Target: "http://x", Headers: []Header{{"X-Idempotency-KEY", "k"}}}, "conform sets the x-idempotency-key header itself; it cannot come from an extra header"},
		{"tenant header", Config{Target: "http://x", Headers: []Header{{"x-tenant-id", "t"}}}, "conform sets the x-tenant-id header itself; it cannot come from an extra header"},
		{"unknown operation", Config{Target: "http://x", Operation: "orders.delete"}, `the policy declares no operation "orders.delete"; it declares orders.create, orders.cancel, orders.get`},
		{"read-only operation", Config{Target: "http://x", Operation: "orders.get"}, "operation orders.get is read-only; conform probes a state-changing operation"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name != "no policy" {
				tt.cfg.Policy = policy
			}
			_, err := New(tt.cfg)
			if got := errText(err); got != tt.want {
				t.Errorf("New = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	r, err := New(Config{
		Policy: engine(t, nil).Policy(), Target: "https://user:pw@orders.example/api/", EffectsURL: "https://orders.example/_effects",
		Headers: []Header{{"Authorization", "Bearer x"}}, Concurrency: 8, Timeout: 2 * time.Second, MaxDuration: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The probes send 18 requests, CF07's burst 8 more, and each of the 10
	// probes that count executions reads the counter twice.
	want := "conform: 13 probes, at most 46 requests, concurrency 8, per-request timeout 2s (3s when it may wait on an attempt in flight), deadline 30s -> " +
		"https://user:xxxxx@orders.example/api/, operation orders.create, effects counter https://orders.example/_effects, extra headers Authorization: <redacted>"
	if got := r.Bounds().String(); got != want {
		t.Errorf("bounds:\n%s\nwant:\n%s", got, want)
	}
	if r.base != "https://user:pw@orders.example/api" {
		t.Errorf("base %q", r.base)
	}
}

// The skip reasons a policy can give, including those of a policy the
// engine would refuse (so conform cannot rely on the checks for them).
func TestSkipReasons(t *testing.T) {
	src, err := os.ReadFile("testdata/orders.json")
	if err != nil {
		t.Fatal(err)
	}
	var policy map[string]any
	if err := json.Unmarshal(src, &policy); err != nil {
		t.Fatal(err)
	}
	policy["idempotency_scope"] = []any{"idempotency_key"}
	policy["http_idempotency"].(map[string]any)["echo_key_header"] = false
	policy["idempotency_fingerprint"] = map[string]any{"canonicalization": "raw_bytes", "inputs": []any{"method", "path"}}
	first := policy["operations"].([]any)[0].(map[string]any)
	first["example"] = map[string]any{"body": []any{}}
	policy["operations"] = []any{first}
	if src, err = json.Marshal(policy); err != nil {
		t.Fatal(err)
	}
	doc, _, _ := boundary.Parse("orders.json", src)
	p := doc.Policy

	r, err := New(Config{Policy: p, Target: "http://x"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, pr := range probes {
		got[pr.id] = pr.skip(r)
	}
	noBody := "the example body of orders.create is not a JSON object, so conform cannot add idemlint_probe_nonce to it; give an object body instead"
	noBodyInputs := "idempotency_fingerprint.inputs leaves out the body: every body is the same payload"
	want := map[string]string{
		"CF01": noBody,
		"CF02": noBody,
		"CF03": noBody,
		"CF04": "http_idempotency.echo_key_header is false",
		"CF05": noBodyInputs,
		"CF06": "idempotency_fingerprint.canonicalization is raw_bytes: a re-serialised body is another payload",
		"CF07": noBody,
		"CF08": "idempotency_scope does not list operation_key: one key is one record across operations",
		"CF09": "the policy declares no read-only operation outside require_key",
		"CF10": noBodyInputs,
		"CF11": noBodyInputs,
		"CF12": noBody,
		"CF13": "idempotency_scope does not list tenant_id: tenants share records",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("skip reasons (-want +got):\n%s", diff)
	}
	if b := r.Bounds(); b.MaxRequests != 0 || b.Probes != 13 {
		t.Errorf("bounds %+v: every probe is skipped, so no request may be announced", b)
	}
}

func TestPickOperations(t *testing.T) {
	for _, tt := range []struct {
		name                         string
		edit                         func(doc map[string]any)
		operation                    string
		wantTarget, wantSecond, want string
	}{
		{name: "first key-required", wantTarget: "orders.create", wantSecond: "orders.cancel", want: "orders.get"},
		{name: "named", operation: "orders.cancel", wantTarget: "orders.cancel", wantSecond: "orders.create", want: "orders.get"},
		{
			name: "key required by operation",
			edit: func(doc map[string]any) {
				section(doc, "http_idempotency")["require_key"] = map[string]any{"operations": []any{"orders.cancel", "orders.get"}}
			},
			// orders.get requires the key, so it is no read-only probe.
			wantTarget: "orders.cancel", wantSecond: "orders.create",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(Config{Policy: engine(t, tt.edit).Policy(), Target: "http://x", Operation: tt.operation})
			if err != nil {
				t.Fatal(err)
			}
			got := []string{r.target.Key.Value, key(r.second), key(r.readOnly)}
			if diff := cmp.Diff([]string{tt.wantTarget, tt.wantSecond, tt.want}, got); diff != "" {
				t.Errorf("target, second, read-only (-want +got):\n%s", diff)
			}
		})
	}
}

func key(op *operation) string {
	if op == nil {
		return ""
	}
	return op.Key.Value
}

func TestFillPath(t *testing.T) {
	tr := &trial{run: &run{}}
	for _, tt := range []struct {
		id, template, want string
	}{
		{"", "/orders/{id}/cancel", "/orders/probe/cancel"},
		{"A1", "/orders/{id}", "/orders/A1"},
		{"a/b c", "/orders/{id}", "/orders/a%2Fb%20c"},
		{"7", "/orders", "/orders"},
	} {
		tr.resourceID = tt.id
		if got := tr.fillPath(tt.template); got != tt.want {
			t.Errorf("fillPath(%q) with id %q = %q, want %q", tt.template, tt.id, got, tt.want)
		}
	}
}
