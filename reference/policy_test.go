package reference

import (
	"errors"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// One policy with an error finding: the engine refuses it, conform
// against a live target probes it with the finding as a note.
func TestCheckPolicyStrictRefusesWhatLenientNotes(t *testing.T) {
	src := policySource(t, "adapter.json", map[string]any{"/idempotency_inflight": remove})

	_, findings, err := CheckPolicy("policy.json", src, true, checks.DefaultOptions())
	var invalid *InvalidPolicyError
	if !errors.As(err, &invalid) || len(findings) == 0 {
		t.Fatalf("strict CheckPolicy = %v, want *InvalidPolicyError with findings", err)
	}

	doc, notes, err := CheckPolicy("policy.json", src, false, checks.DefaultOptions())
	if err != nil || doc == nil || doc.Policy == nil {
		t.Fatalf("lenient CheckPolicy = %v, %v; want the policy", doc, err)
	}
	if len(notes) != len(findings) || notes[0].Rule != findings[0].Rule {
		t.Errorf("lenient findings %v, want the strict ones %v", notes, findings)
	}
	if _, err := New("policy.json", src); !errors.As(err, &invalid) {
		t.Errorf("New = %v, want the strict refusal", err)
	}
}

func TestCheckPolicyRefusesWhatIsNoPolicy(t *testing.T) {
	for _, strict := range []bool{true, false} {
		_, _, err := CheckPolicy("edge.json", []byte(`{"spec_version": "idemlint.boundary/v1", "boundary": "browser_to_bff", "from": "web", "to": "bff",
			"operations": [{"operation_key": "orders.list", "method": "GET", "path": "/orders"}]}`), strict, checks.DefaultOptions())
		want := `edge.json is not an adapter policy: its boundary is "browser_to_bff"; want "adapter", or "gateway_to_adapter" with an embedded "adapter" object`
		if err == nil || err.Error() != want {
			t.Errorf("strict=%v: CheckPolicy = %v, want %s", strict, err, want)
		}
	}
	_, _, err := CheckPolicy("list.json", []byte(`[1]`), false, checks.DefaultOptions())
	if err == nil || !strings.HasPrefix(err.Error(), "list.json is not a JSON object\nlist.json:1:1: error IDL001 ") {
		t.Errorf("lenient CheckPolicy of an array = %v, want the refusal with its IDL001 finding", err)
	}
}

// The engine checks a policy with the checks it is given: without a
// schema stage IDL002 names the value that departs from the schema; with
// one (idemlint's validator) the stage words it.
func TestNewChecksThePolicyWithTheGivenChecks(t *testing.T) {
	src := policySource(t, "adapter.json", map[string]any{"/idempotency_inflight/policy": "hurry"})
	idl002 := func(opts ...Option) string {
		t.Helper()
		_, err := New("policy.json", src, append(opts, WithLogger(quietLogger))...)
		var invalid *InvalidPolicyError
		if errors.As(err, &invalid) {
			for _, f := range invalid.Findings {
				if f.Rule == "IDL002" {
					return f.Message
				}
			}
		}
		t.Fatalf("New = %v, want the policy refused for an IDL002 finding", err)
		return ""
	}
	if got := idl002(); !strings.Contains(got, `"/idempotency_inflight/policy" does not match the JSON Schema`) {
		t.Errorf("with the default checks: IDL002 says %q, want the decoder's words", got)
	}
	opts := checks.DefaultOptions()
	opts.Schema = func() checks.SchemaStage { return wordingStage{} }
	if got := idl002(WithChecks(opts)); got != "the stage's words" {
		t.Errorf("with a schema stage: IDL002 says %q, want the stage's words", got)
	}
}

// wordingStage words every nonconforming document the same way.
type wordingStage struct{}

func (wordingStage) EachViolation(_ *jsontree.Node, _ string, report func(pointer, message string)) {
	report("/idempotency_inflight/policy", "the stage's words")
}
