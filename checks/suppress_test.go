package checks

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// keyNotLogged returns the base flow with an adapter whose only finding is
// IDL112's warning at /observability/log_fields.
func keyNotLogged(t *testing.T) fixtures.Case {
	t.Helper()
	c, err := fixtures.Lookup("rules/IDL112/key-not-logged")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// adapterWith returns keyNotLogged's adapter with "x-idemlint-ignore" set to the JSON
// text ignore ("" leaves the field out), parsed as a document.
func adapterWith(t *testing.T, ignore string) *boundary.Document {
	t.Helper()
	src, err := fs.ReadFile(keyNotLogged(t).Files, "04-adapter.json")
	if err != nil {
		t.Fatal(err)
	}
	if ignore != "" {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(src, &doc); err != nil {
			t.Fatal(err)
		}
		doc[boundary.SuppressionField] = json.RawMessage(ignore)
		if src, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
	}
	doc, _, problems := boundary.Parse("04-adapter.json", src)
	if doc == nil || len(problems) > 0 {
		t.Fatalf("test document does not parse: %v", problems)
	}
	return doc
}

// override runs the per-document rules on doc, adds extra findings, applies
// the overrides and returns the findings as "RULE severity pointer: message",
// sorted.
func override(t *testing.T, doc *boundary.Document, opts Options, extra ...Finding) []string {
	t.Helper()
	var findings []Finding
	for _, r := range Core {
		if r.CheckDocument != nil && !opts.Disabled[r.ID] {
			r.CheckDocument(&DocumentPass{Rule: r, Doc: doc, Limits: &opts.Limits, findings: &findings})
		}
	}
	run := newRun(&opts)
	var fs fileSuppressions
	fs.entries = readSuppressions(&DocumentPass{Rule: idl003, Doc: doc, Limits: &opts.Limits, findings: &fs.malformed}, Core)
	run.suppressions.add(doc.Path, fs)
	res := &Result{Findings: append(findings, extra...)}
	run.afterRules(res)
	got := []string{}
	for _, f := range res.Findings {
		got = append(got, fmt.Sprintf("%s %s %s: %s", f.Rule, f.Severity, f.Pointer, f.Message))
	}
	slices.Sort(got)
	return got
}

const idl112Finding = `IDL112 warning /observability/log_fields: add "idempotency_key" to observability.log_fields: a replay gets a new request id, so only the key ties a duplicate to its first attempt`

func TestSuppressionEntries(t *testing.T) {
	const reason = `"the gateway logs the key"`
	tests := []struct {
		name   string
		ignore string
		want   []string
	}{
		{name: "no suppression", want: []string{idl112Finding}},
		{name: "valid entry hides the finding", ignore: `[{"rule": "IDL112", "reason": ` + reason + `}]`, want: []string{}},
		{name: "empty list", ignore: `[]`, want: []string{idl112Finding}},
		{
			name:   "not an array",
			ignore: `{"rule": "IDL112", "reason": ` + reason + `}`,
			want: []string{
				`IDL003 error /x-idemlint-ignore: "x-idemlint-ignore" must be an array of {"rule": "IDLnnn", "reason": "..."} objects, found object`,
				idl112Finding,
			},
		},
		{
			name:   "entry not an object",
			ignore: `["IDL112"]`,
			want: []string{
				`IDL003 error /x-idemlint-ignore/0: a suppression must be an object {"rule": "IDLnnn", "reason": "..."}, found string`,
				idl112Finding,
			},
		},
		{
			name:   "rule missing",
			ignore: `[{"reason": ` + reason + `}]`,
			want: []string{
				`IDL003 error /x-idemlint-ignore/0/rule: add "rule" to this suppression: the id of the rule whose findings it hides, e.g. "IDL112"`,
				idl112Finding,
			},
		},
		{
			name:   "rule not a string",
			ignore: `[{"rule": 112, "reason": ` + reason + `}]`,
			want: []string{
				`IDL003 error /x-idemlint-ignore/0/rule: "rule" must be a rule id such as "IDL112", found number`,
				idl112Finding,
			},
		},
		{
			name:   "rule id in lower case",
			ignore: `[{"rule": "idl112", "reason": ` + reason + `}]`,
			want: []string{
				`IDL003 error /x-idemlint-ignore/0/rule: unknown rule "idl112"; did you mean "IDL112"?`,
				idl112Finding,
			},
		},
		{
			name:   "rule id short of a digit",
			ignore: `[{"rule": "IDL12", "reason": ` + reason + `}]`,
			want: []string{
				`IDL003 error /x-idemlint-ignore/0/rule: unknown rule "IDL12"; did you mean "IDL102", "IDL112" or "IDL212"?`,
				idl112Finding,
			},
		},
		{
			name:   "unknown rule",
			ignore: `[{"rule": "IDL999", "reason": ` + reason + `}]`,
			want: []string{
				`IDL003 error /x-idemlint-ignore/0/rule: unknown rule "IDL999"; "idemlint rules" lists the rule ids`,
				idl112Finding,
			},
		},
		{
			name:   "rules that cannot be suppressed",
			ignore: `[{"rule": "IDL001", "reason": ` + reason + `}, {"rule": "IDL003", "reason": ` + reason + `}]`,
			want: []string{
				`IDL003 error /x-idemlint-ignore/0/rule: IDL001 cannot be suppressed; fix what it reports instead`,
				`IDL003 error /x-idemlint-ignore/1/rule: IDL003 cannot be suppressed; fix what it reports instead`,
				idl112Finding,
			},
		},
		{
			// The first entry still hides the finding; the second is an error.
			name:   "rule suppressed twice",
			ignore: `[{"rule": "IDL112", "reason": ` + reason + `}, {"rule": "IDL112", "reason": "again"}]`,
			want: []string{
				`IDL003 error /x-idemlint-ignore/1/rule: IDL112 is already suppressed by /x-idemlint-ignore/0; remove this entry`,
			},
		},
		{
			name:   "reason missing",
			ignore: `[{"rule": "IDL112"}]`,
			want: []string{
				`IDL003 error /x-idemlint-ignore/0/reason: add "reason" to this suppression: say why the finding does not apply here`,
				idl112Finding,
			},
		},
		{
			name:   "reason blank",
			ignore: `[{"rule": "IDL112", "reason": " \t"}]`,
			want: []string{
				`IDL003 error /x-idemlint-ignore/0/reason: "reason" is empty; say why the finding does not apply here`,
				idl112Finding,
			},
		},
		{
			name:   "reason not a string",
			ignore: `[{"rule": "IDL112", "reason": true}]`,
			want: []string{
				`IDL003 error /x-idemlint-ignore/0/reason: "reason" must be a string saying why the finding does not apply here, found boolean`,
				idl112Finding,
			},
		},
		{
			name:   "unknown field",
			ignore: `[{"rule": "IDL112", "reason": ` + reason + `, "until": "2026-01-01"}]`,
			want: []string{
				`IDL003 error /x-idemlint-ignore/0/until: unknown field "until" in a suppression; allowed: reason, rule`,
				idl112Finding,
			},
		},
		{
			name:   "unused entry",
			ignore: `[{"rule": "IDL112", "reason": ` + reason + `}, {"rule": "IDL110", "reason": ` + reason + `}]`,
			want: []string{
				`IDL003 warning /x-idemlint-ignore/1: the suppression of IDL110 hides no finding in this file; remove it`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := override(t, adapterWith(t, tt.ignore), DefaultOptions())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOverridesFollowTheConfiguration(t *testing.T) {
	const ignore = `[{"rule": "IDL112", "reason": "logged upstream"}, {"rule": "IDL110"}]`
	missingReason := `IDL003 error /x-idemlint-ignore/1/reason: add "reason" to this suppression: say why the finding does not apply here`
	tests := []struct {
		name     string
		disabled []string
		severity map[string]Severity
		want     []string
	}{
		{name: "defaults", want: []string{missingReason}},
		{
			// IDL112 did not run, so its entry is not called unused.
			name: "suppressed rule disabled", disabled: []string{"IDL112"},
			want: []string{missingReason},
		},
		{
			// Silenced, the malformed entry still hides nothing.
			name: "IDL003 disabled", disabled: []string{"IDL003"},
			want: []string{},
		},
		{
			name: "severity overrides", severity: map[string]Severity{"IDL003": Warning},
			want: []string{strings.Replace(missingReason, "error", "warning", 1)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Severity = tt.severity
			opts.Disabled = map[string]bool{}
			for _, id := range tt.disabled {
				opts.Disabled[id] = true
			}
			got := override(t, adapterWith(t, ignore), opts)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("severity of every finding of a rule", func(t *testing.T) {
		opts := DefaultOptions()
		opts.Severity = map[string]Severity{"IDL112": Error}
		got := override(t, adapterWith(t, ""), opts)
		want := []string{strings.Replace(idl112Finding, "warning", "error", 1)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("findings (-want +got):\n%s", diff)
		}
	})
}

// TestSuppressionHidesCrossDocumentFindings: a finding of a set rule located
// in a file is hidden by that file's entry, and only by that file's.
func TestSuppressionHidesCrossDocumentFindings(t *testing.T) {
	doc := adapterWith(t, `[{"rule": "IDL112", "reason": "logged upstream"}, {"rule": "IDL207", "reason": "echo differs on purpose"}]`)
	here := Finding{Rule: "IDL207", Severity: Error, File: doc.Path, Pointer: "/http_idempotency/echo_key_header", Message: "here"}
	elsewhere := Finding{Rule: "IDL207", Severity: Error, File: "03-gateway-to-adapter.json", Pointer: "/http_idempotency/echo_key_header", Message: "elsewhere"}
	got := override(t, doc, DefaultOptions(), here, elsewhere)
	want := []string{"IDL207 error /http_idempotency/echo_key_header: elsewhere"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// TestCheckLeavesOutDisabledRulesAndIgnoredFiles runs the whole runner: an
// ignored file is not examined at all, and a disabled rule reports nothing.
func TestCheckLeavesOutDisabledRulesAndIgnoredFiles(t *testing.T) {
	dir := t.TempDir()
	if err := keyNotLogged(t).Materialize(dir); err != nil {
		t.Fatal(err)
	}
	generated := filepath.Join(dir, "generated")
	if err := os.Mkdir(generated, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(generated, "broken.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}

	opts := DefaultOptions()
	opts.Disabled = map[string]bool{"IDL112": true}
	opts.Files.Ignore = func(path string) bool { return strings.HasPrefix(path, generated) }
	res, err := CheckPaths([]string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 4 || len(res.Findings) != 0 {
		t.Errorf("Check = %d files, findings %v; want 4 files, no findings", res.Files, res.Findings)
	}
}
