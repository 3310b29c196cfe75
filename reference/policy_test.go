package reference

import (
	"errors"
	"strings"
	"testing"
)

// One policy with an error finding: the engine refuses it, conform
// against a live target probes it with the finding as a note.
func TestCheckPolicyStrictRefusesWhatLenientNotes(t *testing.T) {
	src := policySource(t, "adapter.json", map[string]any{"/idempotency_inflight": remove})

	_, findings, err := CheckPolicy("policy.json", src, true)
	var invalid *InvalidPolicyError
	if !errors.As(err, &invalid) || len(findings) == 0 {
		t.Fatalf("strict CheckPolicy = %v, want *InvalidPolicyError with findings", err)
	}

	doc, notes, err := CheckPolicy("policy.json", src, false)
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
			"operations": [{"operation_key": "orders.list", "method": "GET", "path": "/orders"}]}`), strict)
		want := `edge.json is not an adapter policy: its boundary is "browser_to_bff"; want "adapter", or "gateway_to_adapter" with an embedded "adapter" object`
		if err == nil || err.Error() != want {
			t.Errorf("strict=%v: CheckPolicy = %v, want %s", strict, err, want)
		}
	}
	_, _, err := CheckPolicy("list.json", []byte(`[1]`), false)
	if err == nil || !strings.HasPrefix(err.Error(), "list.json is not a JSON object\nlist.json:1:1: error IDL001 ") {
		t.Errorf("lenient CheckPolicy of an array = %v, want the refusal with its IDL001 finding", err)
	}
}
