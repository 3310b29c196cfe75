package conform

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

func TestNewRefuses(t *testing.T) {
	policy := engine(t, nil).Policy()
	array, _ := jsontree.Parse(`{"a": [1]}`)
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no policy", Config{Targets: []string{"http://x"}}, "no policy to probe"},
		{"no target", Config{}, "no target: give the base URL of the service"},
		{"two targets", Config{Targets: []string{"http://x"}, Handler: http.NotFoundHandler()}, "probe either a target URL or an in-process handler, not both"},
		{"effects URL with handler", Config{Handler: http.NotFoundHandler(), EffectsURL: "http://x/_effects"}, "an in-process run counts executions with Effects, not an effects URL"},
		{"counter without handler", Config{Targets: []string{"http://x"}, Effects: func() int64 { return 0 }}, "an in-process effects counter needs an in-process handler"},
		{"not a URL", Config{Targets: []string{"http://[::1"}}, `the target is not a URL: parse "http://[::1": missing ']' in host`},
		{"ftp", Config{Targets: []string{"ftp://user:pw@host/"}}, "the target ftp://user:xxxxx@host/ must be an http or https URL"},
		{"no host", Config{Targets: []string{"http:///orders"}}, "the target http:///orders has no host"},
		{"query", Config{Targets: []string{"http://host/?a=1"}}, "the target http://host/?a=1 has a query; give the base URL the operation paths are appended to"},
		{"fragment", Config{Targets: []string{"http://host/#x"}}, "the target http://host/#x has a fragment"},
		{"bad effects URL", Config{Targets: []string{"http://host"}, EffectsURL: "/_effects"}, "the effects URL /_effects must be an http or https URL"},
		{"concurrency 1", Config{Targets: []string{"http://x"}, Concurrency: 1}, "concurrency must be between 2 and 256, got 1"},
		{"concurrency 257", Config{Targets: []string{"http://x"}, Concurrency: 257}, "concurrency must be between 2 and 256, got 257"},
		{"negative timeout", Config{Targets: []string{"http://x"}, Timeout: -time.Second}, "the request timeout must be positive, got -1s"},
		{"negative deadline", Config{Targets: []string{"http://x"}, MaxDuration: -time.Second}, "the run deadline must be positive, got -1s"},
		{"body not an object", Config{Targets: []string{"http://x"}, Body: array.Get("a")}, "the probe body must be a JSON object: conform adds its probe fields to it"},
		{"key header", Config{Targets: []string{"http://x"}, Headers: []Header{{"X-Idempotency-KEY", "k-123456"}}}, "conform sets the x-idempotency-key header itself; it cannot come from an extra header"},
		{"tenant header", Config{Targets: []string{"http://x"}, Headers: []Header{{"x-tenant-id", "t-123456"}}}, "conform sets the x-tenant-id header itself; it cannot come from an extra header"},
		{"unknown operation", Config{Targets: []string{"http://x"}, Operation: "orders.delete"}, `the policy declares no operation "orders.delete"; it declares orders.create, orders.cancel, orders.get`},
		{"read-only operation", Config{Targets: []string{"http://x"}, Operation: "orders.get"}, "operation orders.get is read-only; conform probes a state-changing operation"},
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
		Policy: engine(t, nil).Policy(), Targets: []string{"https://user:pw@orders.example/api/"}, EffectsURL: "https://orders.example/_effects",
		Origin: "https://app.orders.example", Headers: []Header{{"Authorization", "Bearer x"}}, Concurrency: 8, Timeout: 2 * time.Second, MaxDuration: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The probes send 24 requests, CF07's burst 8 more, each of the 13
	// probes that count executions reads the counter twice, and the
	// pre-flight check asks the target and the counter once.
	want := "conform: 19 probes, at most 60 requests, concurrency 8, per-request timeout 2s (3s when it may wait on an attempt in flight), deadline 30s, bodies up to 1048576 bytes -> " +
		"https://user:xxxxx@orders.example/api/, operation orders.create, effects counter https://orders.example/_effects, origin https://app.orders.example, extra headers Authorization: <redacted>"
	if got := r.Bounds().String(); got != want {
		t.Errorf("bounds:\n%s\nwant:\n%s", got, want)
	}
	if r.bases[0] != "https://user:pw@orders.example/api" {
		t.Errorf("base %q", r.bases[0])
	}
}

// The skip reasons a policy can give: one that narrows what conform can
// probe, and one written as a library builds it, with most sections
// missing (the engine refuses both; conform probes them as written).
func TestSkipReasons(t *testing.T) {
	src, err := os.ReadFile("testdata/orders.json")
	if err != nil {
		t.Fatal(err)
	}
	var narrow map[string]any
	if err := json.Unmarshal(src, &narrow); err != nil {
		t.Fatal(err)
	}
	narrow["idempotency_scope"] = []any{"idempotency_key"}
	section(narrow, "http_idempotency")["echo_key_header"] = false
	narrow["idempotency_fingerprint"] = map[string]any{"canonicalization": "raw_bytes", "inputs": []any{"method", "path"}}
	delete(section(narrow, "idempotency_replay"), "replayed_header")
	narrow["operations"] = narrow["operations"].([]any)[:1]
	narrowSrc, err := json.Marshal(narrow)
	if err != nil {
		t.Fatal(err)
	}
	p, _, _ := boundary.Parse("narrow.json", narrowSrc)

	bare, _, _ := boundary.Parse("bare.json", []byte(`{"spec_version": "idemlint.boundary/v1", "boundary": "adapter",
		"service": "orders", "operations": [{"operation_key": "orders.create", "method": "POST", "path": "/orders"}]}`))

	noBodyInputs := "idempotency_fingerprint.inputs leaves out the body: every body is the same payload"
	noFingerprint := "the policy declares no idempotency_fingerprint, so no two payloads are known to differ"
	noReplay := "the policy declares no idempotency_replay, so it promises no replay"
	noScope := "the policy declares no idempotency_scope"
	oneTarget := "one target: give --target once per replica to probe replicas"
	noOrigin := "no --origin: give the origin the browser front end is served from to probe its CORS preflight"
	for _, tt := range []struct {
		name   string
		policy *boundary.Policy
		want   map[string]string
	}{
		{"narrow", p.Policy, map[string]string{
			"CF04": "http_idempotency.echo_key_header is not true",
			"CF05": noBodyInputs,
			"CF06": `idempotency_fingerprint.canonicalization is "raw_bytes": a re-serialised body is another payload`,
			"CF08": "idempotency_scope does not list operation_key: operations share records",
			"CF09": "the policy declares no read-only operation outside require_key",
			"CF10": noBodyInputs,
			"CF11": noBodyInputs,
			"CF13": "idempotency_scope does not list tenant_id: tenants share records",
			"CF16": "idempotency_replay declares no replayed_header",
			"CF17": "idempotency_scope does not list actor_id: actors share records",
			"CF18": oneTarget,
			"CF19": noOrigin,
		}},
		{"bare", bare.Policy, map[string]string{
			"CF01": "orders.create does not require the key (http_idempotency.require_key)",
			"CF03": noReplay,
			"CF04": "http_idempotency.echo_key_header is not true",
			"CF05": "idempotency_conflict.on_payload_mismatch declares no status",
			"CF06": noFingerprint,
			"CF08": noScope,
			"CF09": "the policy declares no read-only operation outside require_key",
			"CF10": "idempotency_conflict.on_payload_mismatch declares no status",
			"CF11": noFingerprint,
			"CF12": noReplay,
			"CF13": noScope,
			"CF14": "neither CF01 nor CF05 runs, so there is no refusal to check",
			"CF15": "orders.create does not require the key (http_idempotency.require_key)",
			"CF16": "idempotency_replay declares no replayed_header",
			"CF17": noScope,
			"CF18": oneTarget,
			"CF19": noOrigin,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(Config{Policy: tt.policy, Targets: []string{"http://x"}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, pr := range probes {
				if reason := pr.skip(r); reason != "" {
					got[pr.ID] = reason
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("skip reasons (-want +got):\n%s", diff)
			}
		})
	}
}

// An example body that is not an object is replaced by {}, with a note.
func TestExampleBodyNotAnObject(t *testing.T) {
	e := engine(t, func(doc map[string]any) {
		doc["operations"].([]any)[0].(map[string]any)["example"] = map[string]any{"body": []any{1, 2}}
	})
	base := serveEngine(t, e, nil)
	rep := probeTarget(t, Config{Policy: e.Policy(), Targets: []string{base}, EffectsURL: base + reference.EffectsPath})
	if failed := ids(rep, Fail); failed != nil {
		t.Errorf("failed %v:%s", failed, describe(rep))
	}
	want := []string{"the example body of orders.create is not a JSON object; conform sends {} plus its probe fields instead"}
	if diff := cmp.Diff(want, rep.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
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
			r, err := New(Config{Policy: engine(t, tt.edit).Policy(), Targets: []string{"http://x"}, Operation: tt.operation})
			if err != nil {
				t.Fatal(err)
			}
			got := []string{r.target.Key, key(r.second), key(r.readOnly)}
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
	return op.Key
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
