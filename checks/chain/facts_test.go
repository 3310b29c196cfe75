package chain

import (
	"runtime"
	"testing"
	"weak"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// The facts of a document keep nothing of it alive: once the document is
// dropped the collector frees it while its facts still answer, with the
// places of their values. A fact that pointed into the document (the
// model's policy points at the document's own http_idempotency) would keep
// all of it, and a checked set would keep its documents after all.
func TestFactsKeepNoDocument(t *testing.T) {
	src := `{"boundary": "gateway_to_adapter", "from": "gw", "to": "orders",
		"operations": [{"operation_key": "orders.create", "method": "POST", "path": "/orders",
			"example": {"body": {"sku": "A-1"}, "headers": {"content-type": "application/json"}}}],
		"http_idempotency": {"header": "Idempotency-Key", "role": "passthrough", "require_key": {"methods": ["POST"]}},
		"adapter": {"service": "orders", "idempotency_scope": ["tenant_id", "operation_key"],
			"idempotency_fingerprint": {"inputs": ["method", "path", "body"]}}}`
	doc, _, problems := boundary.Parse("3.json", []byte(src))
	if doc == nil || len(problems) > 0 {
		t.Fatalf("parse: %v", problems)
	}
	facts := FactsOf(doc)
	released := weak.Make(doc)
	doc = nil
	runtime.GC()
	if released.Value() != nil {
		t.Fatal("the document stays live as long as its facts")
	}
	op := &facts.Operations.Items[0]
	if !facts.StateChanging || !facts.Requires(op) || facts.Policy.Idempotency.KeyHeader() != "Idempotency-Key" {
		t.Errorf("facts: state-changing %t, requires the key %t, policy's key header %q; want true, true, Idempotency-Key",
			facts.StateChanging, facts.Requires(op), facts.Policy.Idempotency.KeyHeader())
	}
	if pl := facts.Place(facts.Policy.Scope.Items[0].Pos); pl.Pointer != "/adapter/idempotency_scope/0" || pl.Line != 5 || pl.Column != 58 {
		t.Errorf("the scope's first part is at %+v, want line 5, column 58, /adapter/idempotency_scope/0", pl)
	}
	if got := facts.Member(facts.Policy.Pos, "scope_sources"); got != "/adapter/scope_sources" {
		t.Errorf("the policy's scope_sources belongs at %q, want /adapter/scope_sources", got)
	}
}
