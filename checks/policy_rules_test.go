package checks

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// policyRuleIDs are the owner-policy rules these tests cover.
var policyRuleIDs = []string{"IDL106", "IDL107", "IDL108", "IDL109", "IDL110", "IDL111", "IDL112"}

// checkPolicyEdit decodes the valid base adapter, lets edit change it, and
// returns the owner-policy rules' findings as "RULE severity pointer: message"
// and how many findings IDL002 (the schema) reported.
func checkPolicyEdit(t *testing.T, opts Options, edit func(doc map[string]any)) (got []string, schemaFindings int) {
	t.Helper()
	base, err := fixtures.Lookup(fixtures.Base)
	if err != nil {
		t.Fatal(err)
	}
	src, err := fs.ReadFile(base.Files, "04-adapter.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	if src, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	opts.Schema = validator
	_, findings := checkDocument("04-adapter.json", src, new(jsontree.Parser), newRun(&opts))
	got = []string{}
	for _, f := range findings {
		if f.Rule == idl002.ID {
			schemaFindings++
		}
		for _, id := range policyRuleIDs {
			if f.Rule == id {
				got = append(got, fmt.Sprintf("%s %s %s: %s", f.Rule, f.Severity, f.Pointer, f.Message))
			}
		}
	}
	return got, schemaFindings
}

// section returns the object doc[name] of the base adapter.
func section(doc map[string]any, name string) map[string]any {
	return doc[name].(map[string]any)
}

// TestPolicyRulesLeaveWrongTypesToSchema makes sure a field of the wrong
// type, which the typed model decodes as absent, is reported once, by
// IDL002, and never again as "missing" by an owner-policy rule.
func TestPolicyRulesLeaveWrongTypesToSchema(t *testing.T) {
	cases := map[string]func(doc map[string]any){
		"sections are strings": func(doc map[string]any) {
			for _, name := range []string{"idempotency_scope", "idempotency_fingerprint", "idempotency_replay",
				"idempotency_inflight", "idempotency_conflict", "idempotency_storage", "observability"} {
				doc[name] = "see wiki"
			}
		},
		"fields have wrong types": func(doc map[string]any) {
			section(doc, "idempotency_fingerprint")["inputs"] = "body"
			section(doc, "idempotency_fingerprint")["canonicalization"] = true
			section(doc, "idempotency_replay")["on_completed"] = 1
			section(doc, "idempotency_replay")["same_status"] = "true"
			section(doc, "idempotency_replay")["same_body"] = nil
			section(doc, "idempotency_replay")["on_failed"] = []any{}
			section(doc, "idempotency_inflight")["status"] = "409"
			section(doc, "idempotency_inflight")["wait_timeout_ms"] = -1
			section(doc, "idempotency_conflict")["on_payload_mismatch"] = 422
			section(doc, "idempotency_storage")["tier"] = 7
			section(doc, "idempotency_storage")["ttl"] = 24
			section(doc, "observability")["log_fields"] = "idempotency_key"
		},
		"enum values out of range": func(doc map[string]any) {
			section(doc, "idempotency_inflight")["policy"] = "queue"
			section(doc, "idempotency_storage")["tier"] = "gold"
			section(doc, "idempotency_storage")["ttl"] = "1 day"
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			got, schemaFindings := checkPolicyEdit(t, DefaultOptions(), edit)
			if schemaFindings == 0 {
				t.Error("IDL002 reported nothing; the case does not test what it claims")
			}
			if len(got) > 0 {
				t.Errorf("owner-policy rules reported what IDL002 reports:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

// TestIDL111UsesConfiguredMinimum checks that the tier minimums come from
// Options, and that messages write them as a person would.
func TestIDL111UsesConfiguredMinimum(t *testing.T) {
	opts := DefaultOptions()
	opts.Limits.MinTTL = map[string]time.Duration{"default": 36 * time.Hour, "billing": 30 * 24 * time.Hour}
	cases := []struct {
		name    string
		storage map[string]any
		want    []string
	}{
		{
			name:    "below a raised default",
			storage: map[string]any{"tier": "default", "ttl": "24h"},
			want:    []string{`IDL111 error /idempotency_storage/ttl: raise ttl to at least 36h for tier "default" or declare ttl_reduction with a reason: a retry after 24h executes the operation again`},
		},
		{
			name:    "ttl missing",
			storage: map[string]any{"tier": "billing"},
			want:    []string{`IDL111 error /idempotency_storage/ttl: add "ttl" to idempotency_storage: at least 30d for tier "billing"`},
		},
		{
			name:    "reduction without reason is no reduction",
			storage: map[string]any{"tier": "billing", "ttl": "2w", "ttl_reduction": map[string]any{"declared": true, "reason": "  "}},
			want:    []string{`IDL111 error /idempotency_storage/ttl: raise ttl to at least 30d for tier "billing" or declare ttl_reduction with a reason: a retry after 2w executes the operation again`},
		},
		{
			name:    "tier without a configured minimum",
			storage: map[string]any{"tier": "irreversible", "ttl": "1s"},
			want:    []string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := checkPolicyEdit(t, opts, func(doc map[string]any) { doc["idempotency_storage"] = tc.storage })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHumanDuration(t *testing.T) {
	cases := map[time.Duration]string{
		24 * time.Hour:                      "24h",
		36 * time.Hour:                      "36h",
		48 * time.Hour:                      "2d",
		7 * 24 * time.Hour:                  "7d",
		90 * time.Minute:                    "90m",
		45 * time.Second:                    "45s",
		0:                                   "0s",
		1500 * time.Millisecond:             "1.5s",
		7*24*time.Hour + 30*time.Minute:     "10110m",
		49*time.Hour + 500*time.Millisecond: "49h0m0.5s",
	}
	for d, want := range cases {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
