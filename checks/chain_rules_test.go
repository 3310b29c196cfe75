package checks_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/checks"
)

// The fixtures under fixtures/rules/IDL201..IDL210 show each chain rule on
// whole sets; these cases pin what goldens cannot show: pointers and chain
// names, the IDL208 limit option, and silence while a document is missing.

type chainFinding struct {
	Rule, Pointer, Chain string
}

func checkDir(t *testing.T, dir string, opts checks.Options, rules ...string) []chainFinding {
	t.Helper()
	res, err := checks.Check([]string{dir}, opts)
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
			got := checkDir(t, filepath.Join("..", "fixtures", "rules", tc.set), checks.DefaultOptions(), chainRules...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryAmplificationLimitIsAnOption(t *testing.T) {
	dir := filepath.Join("..", "fixtures", "rules", "IDL208", "three-hops-of-three") // 3 x 3 x 3
	for _, tc := range []struct {
		limit, findings int
	}{{26, 1}, {27, 0}, {0, 1}} { // 0: the default, 10
		opts := checks.DefaultOptions()
		opts.MaxRetryAmplification = tc.limit
		if got := checkDir(t, dir, opts, "IDL208"); len(got) != tc.findings {
			t.Errorf("limit %d: %d IDL208 findings, want %d", tc.limit, len(got), tc.findings)
		}
	}
}

// A set with a file that is not JSON might miss just that file's hop:
// IDL201 and IDL210 must not call the rest broken or orphaned.
func TestChainBreaksUnjudgedWhileADocumentIsUnreadable(t *testing.T) {
	src := filepath.Join("..", "fixtures", "rules", "IDL201", "broken-in-the-middle")
	dir := t.TempDir()
	for _, name := range []string{"01-browser-to-bff.json", "02-bff-to-gateway.json", "04-adapter.json"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := checkDir(t, dir, checks.DefaultOptions(), "IDL201", "IDL210"); len(got) != 2 {
		t.Fatalf("without the gateway edge: %v, want an IDL201 and an IDL210 finding", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "03-gateway-to-adapter.json"), []byte(`{"boundary": "gateway_to_adapter",`), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []chainFinding{{"IDL001", "", ""}}
	if diff := cmp.Diff(want, checkDir(t, dir, checks.DefaultOptions(), "IDL001", "IDL201", "IDL210")); diff != "" {
		t.Errorf("with an unreadable gateway edge (-want +got):\n%s", diff)
	}
}
