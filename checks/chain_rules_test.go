package checks_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/fixtures"
)

// The fixtures under fixtures/rules/IDL201..IDL210 show each chain rule on
// whole sets; these cases pin what goldens cannot show: pointers and chain
// names, the IDL208 limit option, and silence while a document is missing.

type chainFinding struct {
	Rule, Pointer, Chain string
}

// fixtureSet writes the fixture set at dir ("rules/IDL208/three-hops-of-three")
// into a temporary directory and returns it.
func fixtureSet(t *testing.T, dir string) string {
	t.Helper()
	c, err := fixtures.Lookup(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := c.Materialize(out); err != nil {
		t.Fatal(err)
	}
	return out
}

func checkDir(t *testing.T, dir string, opts checks.Options, rules ...string) []chainFinding {
	t.Helper()
	res, err := checks.CheckPaths([]string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := []chainFinding{}
	for _, f := range res.Findings {
		for _, r := range rules {
			if f.Rule == r {
				got = append(got, chainFinding{f.Rule, f.Pointer, f.Chain})
			}
		}
	}
	return got
}

const ordersChain = "orders.create: web -> checkout-bff -> edge-gw -> orders-adapter"

func TestChainFindingsPointWhereTheFixBelongs(t *testing.T) {
	tests := []struct {
		set  string
		want []chainFinding
	}{
		{"IDL201/broken-in-the-middle", []chainFinding{{"IDL201", "/operations/0/operation_key", "orders.create: web -> checkout-bff -> edge-gw"}}},
		{"IDL202/gateway-renames-key-header", []chainFinding{
			{"IDL202", "/header_to_allow_inbound", ordersChain},
			{"IDL202", "/header_to_allow_outbound", ordersChain},
			{"IDL203", "/http_idempotency/header", ordersChain},
		}},
		{"IDL203/adapter-uses-default-header", []chainFinding{{"IDL203", "/http_idempotency/header", ordersChain}}},
		{"IDL204/adapter-without-role", []chainFinding{{"IDL204", "/http_idempotency/role", ordersChain}}},
		{"IDL205/embedded-edge-does-not-key-post", []chainFinding{{"IDL205", "/http_idempotency/require_key", ordersChain}}},
		{"IDL207/gateway-omits-echo", []chainFinding{{"IDL207", "/http_idempotency/echo_key_header", ordersChain}}},
		{"IDL208/three-hops-of-three", []chainFinding{{"IDL208", "/http_retry/max_attempts", ordersChain}}},
		// Two flows cross the stale gateway edge: one finding, for the first chain.
		{"IDL209/shared-gateway-old-contract", []chainFinding{{"IDL209", "/contract_version", "orders.create: mobile-app -> mobile-bff -> edge-gw -> orders-adapter"}}},
		{"IDL210/orphan-adapter", []chainFinding{{"IDL210", "/boundary", ""}}},
	}
	chainRules := []string{"IDL201", "IDL202", "IDL203", "IDL204", "IDL205", "IDL206", "IDL207", "IDL208", "IDL209", "IDL210"}
	for _, tc := range tests {
		t.Run(tc.set, func(t *testing.T) {
			got := checkDir(t, fixtureSet(t, "rules/"+tc.set), lint.DefaultOptions(), chainRules...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryAmplificationLimitIsAnOption(t *testing.T) {
	dir := fixtureSet(t, "rules/IDL208/three-hops-of-three") // 3 x 3 x 3
	for _, tc := range []struct {
		limit, findings int
	}{{26, 1}, {27, 0}, {0, 1}} { // 0: the default, 10
		opts := lint.DefaultOptions()
		opts.Limits.MaxRetryAmplification = tc.limit
		if got := checkDir(t, dir, opts, "IDL208"); len(got) != tc.findings {
			t.Errorf("limit %d: %d IDL208 findings, want %d", tc.limit, len(got), tc.findings)
		}
	}
}

// A set with a file that is not JSON might miss just that file's hop:
// IDL201 and IDL210 still report (docs/rules.md, Rules are independent:
// nothing is skipped silently),
// and say that an unreadable file may be the missing hop.
func TestChainBreaksSayAnUnreadableFileMayBeTheMissingHop(t *testing.T) {
	dir := fixtureSet(t, "rules/IDL201/broken-in-the-middle")
	if err := os.Remove(filepath.Join(dir, "03-gateway-to-adapter.json")); err != nil {
		t.Fatal(err)
	}
	const note = "(1 file of the set could not be read or linked; one may be the missing hop)"
	check := func() []checks.Finding {
		res, err := checks.CheckPaths([]string{dir}, lint.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		return res.Findings
	}
	for _, f := range check() {
		if strings.Contains(f.Message, note) {
			t.Errorf("without any unreadable file, %s says %q", f.Rule, note)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "03-gateway-to-adapter.json"), []byte(`{"boundary": "gateway_to_adapter",`), 0o644); err != nil {
		t.Fatal(err)
	}
	noted := map[string]bool{}
	for _, f := range check() {
		if strings.HasSuffix(f.Message, note) {
			noted[f.Rule] = true
		}
	}
	if !noted["IDL201"] || !noted["IDL210"] {
		t.Errorf("with an unreadable gateway edge, the findings noting it are %v; want IDL201 and IDL210", noted)
	}
}

// TestChainRulesLeaveMistypedFieldsToTheSchema pins the split between the
// chain rules and IDL002 on documents that have released their trees: a
// field present with the wrong type is the schema's finding only, while a
// well-typed wrong value is the chain rule's.
func TestChainRulesLeaveMistypedFieldsToTheSchema(t *testing.T) {
	type edit func(docs map[string]map[string]any)
	idem := func(docs map[string]map[string]any, file string) map[string]any {
		return docs[file]["http_idempotency"].(map[string]any)
	}
	customHeader := func(docs map[string]map[string]any) {
		// Every hop names the key "idempotency-key", which differs from
		// the default a mistyped header decodes as.
		for name := range docs {
			idem(docs, name)["header"] = "idempotency-key"
		}
	}
	tests := []struct {
		name string
		rule string
		edit edit
		want bool // whether rule reports; IDL002 reports exactly when not
	}{
		{"role of the wrong type", "IDL204", func(d map[string]map[string]any) { idem(d, "04-adapter.json")["role"] = 5.0 }, false},
		{"role not owner", "IDL204", func(d map[string]map[string]any) { idem(d, "04-adapter.json")["role"] = "passthrough" }, true},
		{"echo of the wrong type", "IDL207", func(d map[string]map[string]any) { idem(d, "04-adapter.json")["echo_key_header"] = "no" }, false},
		{"echo differs", "IDL207", func(d map[string]map[string]any) { idem(d, "04-adapter.json")["echo_key_header"] = false }, true},
		{"require_key of the wrong type", "IDL205", func(d map[string]map[string]any) { idem(d, "04-adapter.json")["require_key"] = "POST" }, false},
		{"require_key misses the operation", "IDL205", func(d map[string]map[string]any) {
			idem(d, "04-adapter.json")["require_key"] = map[string]any{"methods": []any{"PUT"}}
		}, true},
		{"header of the wrong type", "IDL203", func(d map[string]map[string]any) {
			customHeader(d)
			idem(d, "03-gateway-to-adapter.json")["header"] = 5.0
		}, false},
		{"header differs", "IDL203", func(d map[string]map[string]any) {
			customHeader(d)
			idem(d, "03-gateway-to-adapter.json")["header"] = "x-other-key"
		}, true},
		{"adapter inbound list of the wrong type", "IDL202", func(d map[string]map[string]any) {
			d["04-adapter.json"]["header_to_allow_inbound"] = "content-type"
		}, false},
		{"adapter inbound list drops the key", "IDL202", func(d map[string]map[string]any) {
			d["04-adapter.json"]["header_to_allow_inbound"] = []any{"content-type"}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			docs := map[string]map[string]any{}
			base, err := fixtures.Lookup(fixtures.Base)
			if err != nil {
				t.Fatal(err)
			}
			names, _ := fs.Glob(base.Files, "*.json")
			for _, name := range names {
				data, err := fs.ReadFile(base.Files, name)
				if err != nil {
					t.Fatal(err)
				}
				var doc map[string]any
				if err := json.Unmarshal(data, &doc); err != nil {
					t.Fatal(err)
				}
				docs[name] = doc
			}
			tt.edit(docs)
			for name, doc := range docs {
				data, _ := json.MarshalIndent(doc, "", "  ")
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			res, err := checks.CheckPaths([]string{dir}, lint.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			fired, schema := false, false
			for _, f := range res.Findings {
				fired = fired || f.Rule == tt.rule
				schema = schema || f.Rule == "IDL002"
			}
			if fired != tt.want || schema == tt.want {
				t.Errorf("%s reported: %v (want %v); IDL002 reported: %v (want %v)\n%+v", tt.rule, fired, tt.want, schema, !tt.want, res.Findings)
			}
		})
	}
}
