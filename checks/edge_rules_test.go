package checks_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/checks"
)

// The fixtures under fixtures/rules/IDL101..IDL105 show each rule on a full
// chain; these cases pin what the goldens cannot show (pointers) and the
// corners where a rule must stay silent because IDL002 already reports.

type ruleFinding struct {
	Pointer  string
	Severity string
	Message  string
}

// edgeDoc renders a document of kind with the given extra top-level members
// (a JSON fragment starting with a comma, or "").
func edgeDoc(kind, members string) string {
	ids := `"from": "web", "to": "checkout-bff"`
	switch kind {
	case "gateway_to_adapter":
		ids = `"from": "edge-gw", "to": "orders-adapter", "contract_version": "2025-01"`
	case "adapter":
		ids = `"service": "orders-adapter", "contract_version": "2025-01"`
	}
	return fmt.Sprintf(`{"spec_version": "idemlint.boundary/v1", "boundary": %q, %s%s}`, kind, ids, members)
}

const (
	createOp  = `{"operation_key": "orders.create", "method": "POST", "path": "/orders"}`
	getOp     = `{"operation_key": "orders.get", "method": "GET", "path": "/orders/{id}"}`
	keyLists  = `, "cors_allowed_headers": ["x-idempotency-key"], "header_to_allow_inbound": ["x-idempotency-key"]`
	hopLists  = `, "header_to_allow_inbound": ["x-idempotency-key"], "header_to_allow_outbound": ["x-idempotency-key"]`
	onMissing = `"on_missing": {"action": "reject", "status": 400, "error_code": "idempotency_key_required"}`
	keyedPost = `"http_idempotency": {"role": "validate_only", "require_key": {"methods": ["POST"]}, ` + onMissing + `}`
)

func TestEdgeRules(t *testing.T) {
	tests := []struct {
		name string
		rule string
		src  string
		want []ruleFinding
		// schemaPointer, when set, is where IDL002 reports the defect the
		// rule leaves alone.
		schemaPointer string
	}{
		{
			name: "IDL101 incomplete on_missing points where each field belongs",
			rule: "IDL101",
			src:  edgeDoc("browser_to_bff", `, "operations": [`+createOp+`]`+keyLists+`, "http_idempotency": {"require_key": {"methods": ["POST"]}, "on_missing": {"status": 400}}`),
			want: []ruleFinding{
				{"/http_idempotency/on_missing/action", "error", `add "action": "reject" to on_missing`},
				{"/http_idempotency/on_missing/error_code", "error", `add "error_code": "idempotency_key_required" to on_missing`},
			},
		},
		{
			name: "IDL101 names each uncovered operation",
			rule: "IDL101",
			src: edgeDoc("browser_to_bff", `, "operations": [`+createOp+`, {"operation_key": "orders.cancel", "method": "DELETE", "path": "/orders/{id}"}, `+getOp+`]`+keyLists+
				`, "http_idempotency": {"require_key": {"operations": ["orders.cancel"], "methods": ["PUT"]}, `+onMissing+`}`),
			want: []ruleFinding{
				{"/http_idempotency/require_key", "error", `operation "orders.create" (POST) is state-changing but does not require the key: add "POST" to require_key.methods or "orders.create" to require_key.operations`},
			},
		},
		{
			name:          "IDL101 leaves a string status to the schema",
			rule:          "IDL101",
			src:           edgeDoc("browser_to_bff", `, "operations": [`+createOp+`]`+keyLists+`, "http_idempotency": {"require_key": {"methods": ["POST"]}, "on_missing": {"action": "reject", "status": "400", "error_code": "idempotency_key_required"}}`),
			want:          []ruleFinding{},
			schemaPointer: "/http_idempotency/on_missing/status",
		},
		{
			name:          "IDL101 leaves a require_key of the wrong type to the schema",
			rule:          "IDL101",
			src:           edgeDoc("browser_to_bff", `, "operations": [`+createOp+`]`+keyLists+`, "http_idempotency": {"require_key": {"methods": "POST"}, `+onMissing+`}`),
			want:          []ruleFinding{},
			schemaPointer: "/http_idempotency/require_key/methods",
		},
		{
			name: "IDL101 ignores a read-only browser edge",
			rule: "IDL101",
			src:  edgeDoc("browser_to_bff", `, "operations": [`+getOp+`], "http_idempotency": {"role": "validate_only"}`),
			want: []ruleFinding{},
		},
		{
			name: "IDL101 applies to browser_to_bff only",
			rule: "IDL101",
			src:  edgeDoc("bff_to_gateway", `, "operations": [`+createOp+`]`+hopLists+`, "http_idempotency": {"role": "validate_only"}`),
			want: []ruleFinding{},
		},
		{
			name: "IDL102 warns at the cors wildcard and accepts a wildcard elsewhere",
			rule: "IDL102",
			src:  edgeDoc("browser_to_bff", `, "operations": [`+createOp+`], "cors_allowed_headers": ["*"], "header_to_allow_inbound": ["content-type", "*"], `+keyedPost),
			want: []ruleFinding{
				{"/cors_allowed_headers/0", "warning", `list "x-idempotency-key" in cors_allowed_headers explicitly instead of "*": browsers do not honour "*" on requests with credentials, so their preflight fails`},
			},
		},
		{
			name: "IDL102 uses the declared header and reports every list of a gateway edge",
			rule: "IDL102",
			src:  edgeDoc("gateway_to_adapter", `, "operations": [`+createOp+`], "header_to_allow_inbound": ["x-idempotency-key"], "http_idempotency": {"header": "Idempotency-Key", "role": "passthrough"}`),
			want: []ruleFinding{
				{"/header_to_allow_inbound", "error", `add "Idempotency-Key" to header_to_allow_inbound: otherwise the receiving side drops the key and duplicates downstream execute twice`},
				{"/header_to_allow_outbound", "error", `add header_to_allow_outbound with "Idempotency-Key": otherwise the key is not forwarded and duplicates downstream execute twice`},
			},
		},
		{
			name: "IDL102 ignores edges without a state-changing operation",
			rule: "IDL102",
			src:  edgeDoc("bff_to_gateway", `, "operations": [`+getOp+`]`),
			want: []ruleFinding{},
		},
		{
			name:          "IDL102 leaves a list of the wrong type to the schema",
			rule:          "IDL102",
			src:           edgeDoc("bff_to_gateway", `, "operations": [`+createOp+`], "header_to_allow_inbound": "x-idempotency-key", "header_to_allow_outbound": ["x-idempotency-key"], `+keyedPost),
			want:          []ruleFinding{},
			schemaPointer: "/header_to_allow_inbound",
		},
		{
			name: "IDL103 follows state_changing, not the method's default",
			rule: "IDL103",
			src: edgeDoc("bff_to_gateway", `, "operations": [{"operation_key": "carts.touch", "method": "GET", "path": "/carts/touch", "state_changing": true}, {"operation_key": "orders.search", "method": "POST", "path": "/orders/search", "state_changing": false}]`+
				`, "http_idempotency": {"require_key": {"methods": ["PUT"]}}, "http_retry": {"enabled": true, "requires_idempotency_key": true, "mode": "validate_only", "methods": ["GET", "POST"]}`),
			want: []ruleFinding{
				{"/http_retry/methods/0", "error", `GET is retried without a required key for "carts.touch": add "GET" to http_idempotency.require_key.methods or remove GET from http_retry.methods`},
			},
		},
		{
			name: "IDL103 without a methods list reports each unkeyed method once",
			rule: "IDL103",
			src: edgeDoc("bff_to_gateway", `, "operations": [`+createOp+`, {"operation_key": "orders.pay", "method": "POST", "path": "/orders/{id}/pay"}, {"operation_key": "orders.cancel", "method": "DELETE", "path": "/orders/{id}"}]`+
				`, "http_idempotency": {"require_key": {"methods": ["PUT"]}}, "http_retry": {"enabled": true, "requires_idempotency_key": false, "mode": "validate_only"}`),
			want: []ruleFinding{
				{"/http_retry/requires_idempotency_key", "error", "set http_retry.requires_idempotency_key to true: a retry without the key repeats the side effect downstream"},
				{"/http_retry", "error", `http_retry has no "methods", so it retries POST without a required key for "orders.create", "orders.pay": add "POST" to http_idempotency.require_key.methods or list only keyed methods in http_retry.methods`},
				{"/http_retry", "error", `http_retry has no "methods", so it retries DELETE without a required key for "orders.cancel": add "DELETE" to http_idempotency.require_key.methods or list only keyed methods in http_retry.methods`},
			},
		},
		{
			name: "IDL104 checks the browser's own retry and names each unsafe status",
			rule: "IDL104",
			src:  edgeDoc("browser_to_bff", `, "operations": [`+getOp+`], "http_retry": {"enabled": true, "retry_on": [500, "timeout", 204, "429", 408]}`),
			want: []ruleFinding{
				{"/http_retry/mode", "error", `add "mode": "validate_only" to http_retry: this edge does not own idempotency, so it may only resend requests whose key it validated`},
				{"/http_retry/retry_on/0", "error", "remove 500 from retry_on: a 500 may mean the side effect happened; retry only connect_error, timeout, 429, 502, 503, 504"},
				{"/http_retry/retry_on/2", "error", "remove 204 from retry_on: a 204 is not a failure; retry only connect_error, timeout, 429, 502, 503, 504"},
				{"/http_retry/retry_on/4", "error", "remove 408 from retry_on: a 408 is the server's answer to this request, not a transient failure; retry only connect_error, timeout, 429, 502, 503, 504"},
			},
		},
		{
			name:          "IDL104 leaves a misspelt mode to the schema",
			rule:          "IDL104",
			src:           edgeDoc("bff_to_gateway", `, "operations": [`+getOp+`], "http_retry": {"enabled": true, "mode": "validate-only", "retry_on": ["timeout"]}`),
			want:          []ruleFinding{},
			schemaPointer: "/http_retry/mode",
		},
		{
			name: "IDL105 reports an owner gateway edge at the role",
			rule: "IDL105",
			src:  edgeDoc("gateway_to_adapter", `, "operations": [`+getOp+`], "http_idempotency": {"role": "owner"}`),
			want: []ruleFinding{
				{"/http_idempotency/role", "error", `set http_idempotency.role to "validate_only" or "passthrough": only the adapter policy owns idempotency`},
			},
		},
		{
			name: "IDL105 accepts the owner role on an adapter",
			rule: "IDL105",
			src:  edgeDoc("adapter", `, "operations": [`+getOp+`], "http_idempotency": {"role": "owner"}`),
			want: []ruleFinding{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, findings := checks.CheckDocument("doc.json", []byte(tt.src))
			if doc == nil {
				t.Fatalf("test document does not parse: %v", findings)
			}
			got := []ruleFinding{}
			schemaReported := false
			for _, f := range findings {
				if f.Rule == tt.rule {
					got = append(got, ruleFinding{f.Pointer, f.Severity.String(), f.Message})
				}
				if f.Rule == "IDL002" && f.Pointer == tt.schemaPointer {
					schemaReported = true
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s findings differ (-want +got):\n%s", tt.rule, diff)
			}
			if tt.schemaPointer != "" && !schemaReported {
				t.Errorf("IDL002 does not report %s, so %s must not stay silent there; findings: %v", tt.schemaPointer, tt.rule, findings)
			}
		})
	}
}
