package chain

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"weak"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/jsontree"
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
	if !facts.StateChanging() || !facts.Requires(op) || facts.Policy.Idempotency.KeyHeader() != "Idempotency-Key" {
		t.Errorf("facts: state-changing %t, requires the key %t, policy's key header %q; want true, true, Idempotency-Key",
			facts.StateChanging(), facts.Requires(op), facts.Policy.Idempotency.KeyHeader())
	}
	if pl := facts.Place(facts.Policy.Scope.Items[0].Pos); pl.Pointer != "/adapter/idempotency_scope/0" || pl.Line != 5 || pl.Column != 58 {
		t.Errorf("the scope's first part is at %+v, want line 5, column 58, /adapter/idempotency_scope/0", pl)
	}
	if got := facts.Member(facts.Policy.Pos, "scope_sources"); got != "/adapter/scope_sources" {
		t.Errorf("the policy's scope_sources belongs at %q, want /adapter/scope_sources", got)
	}
}

// Cutting the facts' places keeps where every value they hold was
// written, and drops the places of the values they left behind.
func TestCutPlacesKeepsEveryPlace(t *testing.T) {
	src := `{"spec_version": "idemlint.boundary/v1", "boundary": "gateway_to_adapter", "from": "gw", "to": "orders", "contract_version": "2025-01",
		"operations": [{"operation_key": "orders.create", "method": "POST", "path": "/orders"},
			{"operation_key": "orders.get", "method": "GET", "path": "/orders/{id}", "state_changing": false}],
		"header_to_allow_inbound": ["Idempotency-Key", 7], "header_to_allow_outbound": ["Idempotency-Key"], "sets_headers": ["x-tenant-id"],
		"http_idempotency": {"header": "Idempotency-Key", "role": "passthrough", "echo_key_header": true,
			"require_key": {"methods": ["POST"], "operations": ["orders.get"]},
			"on_missing": {"action": "reject", "status": 400, "error_code": "key_required"},
			"key_format": {"max_length": 64}},
		"http_retry": {"enabled": true, "max_attempts": 3, "mode": "validate_only", "methods": ["GET", "POST"],
			"retry_on": ["timeout", 503], "per_try_timeout_ms": 500},
		"as_built": [{"kind": "VirtualService", "name": "orders", "namespace": "shop"}],
		"adapter": {"service": "orders", "idempotency_scope": ["tenant_id", "operation_key"],
			"scope_sources": {"tenant_id": "header:x-tenant-id", "actor_id": "header:x-actor-id"},
			"idempotency_inflight": {"policy": "wait", "status": 409, "wait_timeout_ms": 200, "lease_ms": 1000},
			"idempotency_conflict": {"on_payload_mismatch": {"status": 422, "error_code": "mismatch"}}}}`
	doc, _, problems := boundary.Parse("3.json", []byte(src))
	if doc == nil || len(problems) > 0 {
		t.Fatalf("parse: %v", problems)
	}
	facts := FactsOf(doc)
	before := placesOf(facts)
	if len(before) < 40 || !facts.Has("/http_retry/mode") {
		t.Fatalf("the facts place %d values and mode %t; want more than 40 and true", len(before), facts.Has("/http_retry/mode"))
	}
	facts.CutPlaces()
	if diff := cmp.Diff(before, placesOf(facts)); diff != "" {
		t.Errorf("places moved by the cut (-before +after):\n%s", diff)
	}
	if facts.Has("/http_idempotency/key_format") || facts.Has("/http_retry/mode") || !facts.Has("/adapter/idempotency_scope/1") {
		t.Error("the cut places key_format or mode, which the facts do not hold, or not the scope they hold")
	}
}

// placesOf resolves every Pos the facts hold, in the order of their fields.
func placesOf(f *Facts) []boundary.Place {
	var out []boundary.Place
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Int32:
			if p, ok := v.Interface().(boundary.Pos); ok {
				out = append(out, f.Place(p))
			}
		}
	}
	walk(reflect.ValueOf(f))
	return out
}

// Facts derived with one NameTable, from several goroutines at once,
// read their header lists as written: the names each list holds, compared
// case-insensitively, "*" letting every header through.
func TestHeaderListsNumbered(t *testing.T) {
	src := func(i int) string {
		return fmt.Sprintf(`{"boundary": "bff_to_gateway", "from": "bff", "to": "gw-%d",
			"header_to_allow_inbound": ["Content-Type", "x-only-%d", 7], "header_to_allow_outbound": ["%s"], "sets_headers": ["X-Tenant-Id"]}`, i, i, []string{"*", "x-request-id"}[i%2])
	}
	headers := new(NameTable)
	facts := make([]*Facts, 16)
	var wg sync.WaitGroup
	for i := range facts {
		wg.Go(func() {
			doc, _, problems := boundary.Parse("edge.json", []byte(src(i)))
			if doc == nil || len(problems) > 0 {
				t.Errorf("parse %d: %v", i, problems)
				return
			}
			facts[i] = FactsWith(doc, headers)
		})
	}
	wg.Wait()
	for i, f := range facts {
		if f == nil {
			continue
		}
		mine, other := fmt.Sprintf("X-ONLY-%d", i), fmt.Sprintf("x-only-%d", i+1)
		if !f.Allows(f.HeaderAllowInbound, mine) || !f.Allows(f.HeaderAllowInbound, "content-type") || f.Allows(f.HeaderAllowInbound, other) {
			t.Errorf("document %d: inbound allows %s %t, content-type %t, %s %t; want true, true, false", i,
				mine, f.Allows(f.HeaderAllowInbound, mine), f.Allows(f.HeaderAllowInbound, "content-type"), other, f.Allows(f.HeaderAllowInbound, other))
		}
		if wild := i%2 == 0; f.Allows(f.HeaderAllowOutbound, "x-idempotency-key") != wild {
			t.Errorf("document %d: outbound allows x-idempotency-key %t, want %t", i, !wild, wild)
		}
		if !f.ListsFold(f.SetsHeaders, "x-tenant-id") || f.ListsFold(f.SetsHeaders, "content-type") || f.Allows(f.CORSAllowedHeaders, "content-type") {
			t.Errorf("document %d: sets_headers or the absent CORS list read wrong", i)
		}
	}
}

// require_key's and retry's lists are lists of names too: methods compare
// case-insensitively, operation keys exactly, and an item that is not a
// string counts as an item (IDL208 tells an empty methods list from one
// that names no method) but matches nothing.
func TestListsOfNames(t *testing.T) {
	src := `{"boundary": "bff_to_gateway", "from": "bff", "to": "gw",
		"operations": [{"operation_key": "orders.create", "method": "POST", "path": "/orders"},
			{"operation_key": "orders.get", "method": "GET", "path": "/orders/{id}"},
			{"operation_key": "orders.list", "method": "GET", "path": "/orders"},
			{"operation_key": "ORDERS.GET", "method": "GET", "path": "/ORDERS/{id}"}],
		"http_idempotency": {"role": "passthrough", "require_key": {"methods": ["post", 7], "operations": ["orders.get"]}},
		"http_retry": {"enabled": true, "max_attempts": 2, "methods": [5, "GET"]}}`
	doc, _, problems := boundary.Parse("edge.json", []byte(src))
	if doc == nil || len(problems) > 0 {
		t.Fatalf("parse: %v", problems)
	}
	f := FactsOf(doc)
	var got []bool
	for i := range f.Operations.Items {
		got = append(got, f.Requires(&f.Operations.Items[i]))
	}
	if want := []bool{true, true, false, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("operations requiring the key: %v, want %v", got, want)
	}
	if m := f.Retry.Methods; m.Len() != 2 || !f.ListsFold(m, "get") || f.ListsFold(m, "POST") || f.Idempotency.RequireKey.Methods.Len() != 2 {
		t.Errorf("retry's methods: %d items, get %t, POST %t; require_key's %d items; want 2, true, false, 2",
			m.Len(), f.ListsFold(m, "get"), f.ListsFold(m, "POST"), f.Idempotency.RequireKey.Methods.Len())
	}
}

// Facts number names in the order they are met; once their table is
// settled, the facts of the same documents are the same whichever came
// first.
func TestSettledNamesFollowNoOrder(t *testing.T) {
	srcs := []string{
		`{"boundary": "bff_to_gateway", "from": "bff", "to": "gw", "header_to_allow_inbound": ["x-b", "x-a"],
			"http_retry": {"enabled": true, "methods": ["PUT"]}}`,
		`{"boundary": "browser_to_bff", "from": "web", "to": "bff", "cors_allowed_headers": ["x-c", "x-a"],
			"http_idempotency": {"require_key": {"methods": ["POST"], "operations": ["orders.get"]}}}`,
	}
	docs := make([]*boundary.Document, len(srcs))
	for i, src := range srcs {
		var problems []jsontree.Problem
		if docs[i], _, problems = boundary.Parse(fmt.Sprintf("%d.json", i), []byte(src)); docs[i] == nil || len(problems) > 0 {
			t.Fatalf("parse %d: %v", i, problems)
		}
	}
	derive := func(order ...int) []*Facts {
		names := new(NameTable)
		facts := make([]*Facts, len(docs))
		for _, i := range order {
			facts[i] = FactsWith(docs[i], names)
		}
		names.Settle(facts)
		return facts
	}
	if diff := cmp.Diff(derive(0, 1), derive(1, 0), cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
		t.Errorf("the facts depend on the order they were derived in (-first +second):\n%s", diff)
	}
	f := derive(1, 0)[0]
	if !f.Allows(f.HeaderAllowInbound, "X-A") || f.Allows(f.HeaderAllowInbound, "x-c") || !f.ListsFold(f.Retry.Methods, "put") {
		t.Error("a settled table reads the lists wrong")
	}
}
