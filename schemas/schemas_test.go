package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

const validBrowserToBFF = `{
  "$schema": "https://github.com/idemlint/idemlint/schemas/v1/browser_to_bff.schema.json",
  "spec_version": "idemlint.boundary/v1",
  "boundary": "browser_to_bff",
  "from": "web",
  "to": "bff",
  "cors_allowed_headers": ["content-type", "x-idempotency-key"],
  "header_to_allow_inbound": ["content-type", "x-idempotency-key"],
  "http_idempotency": {
    "header": "x-idempotency-key",
    "role": "validate_only",
    "require_key": {"methods": ["POST", "PUT", "PATCH", "DELETE"], "operations": ["orders.create"]},
    "on_missing": {"action": "reject", "status": 400, "error_code": "idempotency_key_required"},
    "echo_key_header": false,
    "key_format": {"max_length": 255, "pattern": "^[A-Za-z0-9-]+$"}
  },
  "http_retry": {"enabled": false},
  "operations": [
    {
      "operation_key": "orders.create",
      "method": "POST",
      "path": "/orders",
      "example": {
        "body": {"sku": "A1", "qty": 2, "tags": ["x", null, 1.5, true]},
        "headers": {"content-type": "application/json"}
      }
    },
    {"operation_key": "orders.get", "method": "GET", "path": "/orders/{id}", "state_changing": false}
  ],
  "x-owner": {"team": "web"}
}`

const validBFFToGateway = `{
  "spec_version": "idemlint.boundary/v1",
  "boundary": "bff_to_gateway",
  "from": "bff",
  "to": "gateway",
  "header_to_allow_outbound": ["x-idempotency-key"],
  "header_to_allow_inbound": ["*"],
  "http_idempotency": {"role": "validate_only", "require_key": {"methods": ["POST"]}},
  "http_retry": {
    "enabled": true,
    "max_attempts": 3,
    "requires_idempotency_key": true,
    "mode": "validate_only",
    "methods": ["POST", "GET"],
    "retry_on": ["connect_error", "timeout", 429, "502", 503, 504],
    "per_try_timeout_ms": 2000,
    "backoff": {"initial_ms": 0, "max_ms": 1000, "multiplier": 1.5, "jitter": true},
    "x-note": "conservative"
  },
  "operations": [
    {"operation_key": "orders.create", "method": "POST", "path": "/orders"}
  ]
}`

const validGatewayToAdapter = `{
  "spec_version": "idemlint.boundary/v1",
  "boundary": "gateway_to_adapter",
  "from": "gateway",
  "to": "orders-adapter",
  "contract_version": "2024-06-01",
  "header_to_allow_outbound": ["x-idempotency-key"],
  "header_to_allow_inbound": ["x-idempotency-key"],
  "http_idempotency": {"role": "passthrough"},
  "http_retry": {"enabled": true, "max_attempts": 2, "requires_idempotency_key": true, "mode": "validate_only", "retry_on": ["connect_error"]},
  "adapter": {
    "service": "orders-adapter",
    "idempotency_scope": ["service", "operation_key", "contract_version", "tenant_id", "actor_id", "fingerprint", "idempotency_key"],
    "scope_sources": {"tenant_id": "header:x-tenant-id", "actor_id": "header:x-actor-id"},
    "idempotency_fingerprint": {"canonicalization": "canonical_json", "inputs": ["method", "path", "body"], "algorithm": "sha256"},
    "idempotency_replay": {"on_completed": "stored_response", "same_status": true, "same_body": true, "on_failed": "reexecute"},
    "idempotency_inflight": {"policy": "reject", "status": 409},
    "idempotency_conflict": {"on_payload_mismatch": {"status": 422, "error_code": "idempotency_key_reused"}},
    "idempotency_storage": {"tier": "default", "ttl": "24h"},
    "observability": {"log_fields": ["idempotency_key"], "request_id_header": "x-request-id"},
    "x-team": "orders"
  },
  "operations": [
    {"operation_key": "orders.create", "method": "POST", "path": "/orders"},
    {"operation_key": "orders.cancel", "method": "DELETE", "path": "/orders/{id}"}
  ]
}`

// validAdapter is also the benchmark document (about 2 KB).
const validAdapter = `{
  "$schema": "https://github.com/idemlint/idemlint/schemas/v1/adapter.schema.json",
  "spec_version": "idemlint.boundary/v1",
  "boundary": "adapter",
  "service": "payments-adapter",
  "contract_version": "v3",
  "header_to_allow_inbound": ["content-type", "x-idempotency-key", "x-tenant-id", "x-actor-id", "x-request-id"],
  "http_idempotency": {
    "header": "x-idempotency-key",
    "role": "owner",
    "require_key": {"methods": ["POST", "PUT", "PATCH", "DELETE"], "operations": ["payments.capture"]},
    "on_missing": {"action": "reject", "status": 400, "error_code": "idempotency_key_required"},
    "echo_key_header": true,
    "key_format": {"max_length": 128, "pattern": "^[A-Za-z0-9_-]{16,128}$"}
  },
  "idempotency_scope": ["service", "operation_key", "contract_version", "tenant_id", "actor_id", "fingerprint", "idempotency_key"],
  "scope_sources": {"tenant_id": "header:x-tenant-id", "actor_id": "header:x-actor-id"},
  "idempotency_fingerprint": {
    "canonicalization": "canonical_json",
    "inputs": ["method", "path", "query", "body", "header:x-tenant-id"],
    "algorithm": "sha256",
    "exclude_fields": ["/client_timestamp", "/metadata/trace"]
  },
  "idempotency_replay": {
    "on_completed": "stored_response",
    "same_status": true,
    "same_body": true,
    "on_failed": "stored_response",
    "replayed_header": "idempotent-replayed"
  },
  "idempotency_inflight": {"policy": "wait", "status": 409, "wait_timeout_ms": 5000},
  "idempotency_conflict": {"on_payload_mismatch": {"status": 422, "error_code": "idempotency_key_reused"}},
  "idempotency_storage": {
    "tier": "billing",
    "ttl": "14d",
    "ttl_reduction": {"declared": false, "reason": "not reduced"},
    "backend": "postgres"
  },
  "observability": {"log_fields": ["idempotency_key", "request_id"], "request_id_header": "x-request-id"},
  "operations": [
    {
      "operation_key": "payments.create",
      "method": "POST",
      "path": "/payments",
      "example": {
        "body": {"amount": 1000, "currency": "JPY", "items": [{"sku": "P001", "qty": 2}]},
        "headers": {"content-type": "application/json", "x-tenant-id": "t-1"}
      }
    },
    {"operation_key": "payments.capture", "method": "PUT", "path": "/payments/{id}/capture", "x-doc": "captures an authorised payment"},
    {"operation_key": "payments.refund:partial", "method": "PATCH", "path": "/payments/{id}/refunds"},
    {"operation_key": "payments.void", "method": "DELETE", "path": "/payments/{id}"},
    {"operation_key": "payments.get", "method": "GET", "path": "/payments/{id}"},
    {"operation_key": "payments.search", "method": "POST", "path": "/payments/search", "state_changing": false}
  ],
  "x-owner": "payments-team"
}`

var validDocs = map[string]string{
	"browser_to_bff":     validBrowserToBFF,
	"bff_to_gateway":     validBFFToGateway,
	"gateway_to_adapter": validGatewayToAdapter,
	"adapter":            validAdapter,
}

// decode parses JSON the way the loader hands documents over: numbers are
// always json.Number.
func decode(t testing.TB, src string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(src))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", src, err)
	}
	return v
}

// edit is a change to a document: set (or delete, with del) the value at an
// RFC 6901 pointer whose parent exists.
type edit struct {
	ptr string
	val string // JSON
	del bool
}

func set(ptr, val string) edit { return edit{ptr: ptr, val: val} }
func del(ptr string) edit      { return edit{ptr: ptr, del: true} }

func apply(t *testing.T, doc any, e edit) {
	t.Helper()
	toks := strings.Split(e.ptr, "/")[1:]
	for i, tok := range toks {
		toks[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
	}
	parent := valueAt(doc, toks[:len(toks)-1])
	last := toks[len(toks)-1]
	switch p := parent.(type) {
	case map[string]any:
		if e.del {
			delete(p, last)
		} else {
			p[last] = decode(t, e.val)
		}
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i >= len(p) || e.del {
			t.Fatalf("edit %v: bad array edit", e)
		}
		p[i] = decode(t, e.val)
	default:
		t.Fatalf("edit %v: parent is %T", e, parent)
	}
}

func TestValidDocumentsPass(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(k, func(t *testing.T) {
			src, ok := validDocs[k]
			if !ok {
				t.Fatalf("no valid document for kind %s", k)
			}
			if got := Validate(decode(t, src)); len(got) != 0 {
				t.Errorf("Validate(valid %s) = %v, want no violations", k, got)
			}
		})
	}
}

const (
	methods   = `"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"`
	kindsList = `"browser_to_bff", "bff_to_gateway", "gateway_to_adapter", "adapter"`
	retryList = `backoff, enabled, max_attempts, methods, mode, per_try_timeout_ms, requires_idempotency_key, retry_on`
	noTypos   = `; extension fields must start with "x-"`
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		base  string // kind of the valid document to start from
		edits []edit
		want  []Violation
	}{
		// --- required ---
		{
			name:  "missing required top-level field",
			base:  "browser_to_bff",
			edits: []edit{del("/from")},
			want:  []Violation{{"/from", `missing required field "from"`}},
		},
		{
			name:  "several missing required fields, one violation each",
			base:  "adapter",
			edits: []edit{del("/service"), del("/contract_version"), del("/spec_version")},
			want: []Violation{
				{"/contract_version", `missing required field "contract_version"`},
				{"/service", `missing required field "service"`},
				{"/spec_version", `missing required field "spec_version"`},
			},
		},
		{
			name:  "missing required field of an operation",
			base:  "bff_to_gateway",
			edits: []edit{del("/operations/0/path")},
			want:  []Violation{{"/operations/0/path", `missing required field "path"`}},
		},
		{
			name:  "gateway_to_adapter requires contract_version",
			base:  "gateway_to_adapter",
			edits: []edit{del("/contract_version")},
			want:  []Violation{{"/contract_version", `missing required field "contract_version"`}},
		},
		{
			name:  "embedded adapter policy requires service",
			base:  "gateway_to_adapter",
			edits: []edit{del("/adapter/service")},
			want:  []Violation{{"/adapter/service", `missing required field "service"`}},
		},

		// --- types ---
		{
			name:  "integer given as a string",
			base:  "adapter",
			edits: []edit{set("/http_idempotency/on_missing/status", `"400"`)},
			want:  []Violation{{"/http_idempotency/on_missing/status", `"status" must be an integer, found string`}},
		},
		{
			name:  "integer given as a fraction",
			base:  "bff_to_gateway",
			edits: []edit{set("/http_retry/max_attempts", `1.5`)},
			want:  []Violation{{"/http_retry/max_attempts", `"max_attempts" must be an integer, found 1.5`}},
		},
		{
			name:  "integer spelled with an exponent is an integer",
			base:  "bff_to_gateway",
			edits: []edit{set("/http_retry/max_attempts", `3e0`)},
			want:  nil,
		},
		{
			name:  "boolean given as a string",
			base:  "browser_to_bff",
			edits: []edit{set("/operations/1/state_changing", `"false"`)},
			want:  []Violation{{"/operations/1/state_changing", `"state_changing" must be a boolean, found string`}},
		},
		{
			name:  "object given as an array",
			base:  "adapter",
			edits: []edit{set("/idempotency_storage", `[]`)},
			want:  []Violation{{"/idempotency_storage", `"idempotency_storage" must be an object, found array`}},
		},
		{
			name:  "array item of the wrong type",
			base:  "adapter",
			edits: []edit{set("/observability/log_fields/1", `7`)},
			want:  []Violation{{"/observability/log_fields/1", `"log_fields"[1] must be a string, found number`}},
		},
		{
			name:  "operation that is not an object",
			base:  "bff_to_gateway",
			edits: []edit{set("/operations/0", `"orders.create"`)},
			want:  []Violation{{"/operations/0", `"operations"[0] must be an object, found string`}},
		},
		{
			name:  "example body is any JSON, headers are strings",
			base:  "browser_to_bff",
			edits: []edit{set("/operations/0/example/body", `[1, "two", null]`), set("/operations/0/example/headers/x-count", `3`)},
			want:  []Violation{{"/operations/0/example/headers/x-count", `"x-count" must be a string, found number`}},
		},
		{
			name:  "$schema must be a string",
			base:  "adapter",
			edits: []edit{set("/$schema", `1`)},
			want:  []Violation{{"/$schema", `"$schema" must be a string, found number`}},
		},

		// --- enum and const ---
		{
			name:  "role enum",
			base:  "bff_to_gateway",
			edits: []edit{set("/http_idempotency/role", `"own"`)},
			want:  []Violation{{"/http_idempotency/role", `"role" must be one of "owner", "validate_only", "passthrough", found "own"`}},
		},
		{
			name:  "role owner is shape-valid on every kind (semantics are a rule)",
			base:  "browser_to_bff",
			edits: []edit{set("/http_idempotency/role", `"owner"`)},
			want:  nil,
		},
		{
			name:  "method enum with a case hint",
			base:  "bff_to_gateway",
			edits: []edit{set("/operations/0/method", `"post"`)},
			want:  []Violation{{"/operations/0/method", `"method" must be one of ` + methods + `, found "post" (did you mean "POST"?)`}},
		},
		{
			name:  "single-value enum",
			base:  "browser_to_bff",
			edits: []edit{set("/http_idempotency/on_missing/action", `"drop"`)},
			want:  []Violation{{"/http_idempotency/on_missing/action", `"action" must be "reject", found "drop"`}},
		},
		{
			name:  "enum item in a method list",
			base:  "bff_to_gateway",
			edits: []edit{set("/http_retry/methods/1", `"FETCH"`)},
			want:  []Violation{{"/http_retry/methods/1", `"methods"[1] must be one of ` + methods + `, found "FETCH"`}},
		},
		{
			name:  "spec_version const",
			base:  "gateway_to_adapter",
			edits: []edit{set("/spec_version", `"idemlint.boundary/v2"`)},
			want:  []Violation{{"/spec_version", `"spec_version" must be "idemlint.boundary/v1", found "idemlint.boundary/v2"`}},
		},

		// --- unknown fields ---
		{
			name:  "unknown top-level field",
			base:  "bff_to_gateway",
			edits: []edit{set("/retries", `3`)},
			want:  []Violation{{"/retries", `unknown field "retries"` + noTypos}},
		},
		{
			name:  "top-level typo gets a suggestion",
			base:  "adapter",
			edits: []edit{set("/idempotency_scop", `[]`)},
			want:  []Violation{{"/idempotency_scop", `unknown field "idempotency_scop"; did you mean "idempotency_scope"?`}},
		},
		{
			name:  "cors_allowed_headers only on browser_to_bff",
			base:  "bff_to_gateway",
			edits: []edit{set("/cors_allowed_headers", `["x-idempotency-key"]`)},
			want:  []Violation{{"/cors_allowed_headers", `unknown field "cors_allowed_headers"; it is only allowed on browser_to_bff documents`}},
		},
		{
			name:  "header_to_allow_outbound not on browser_to_bff",
			base:  "browser_to_bff",
			edits: []edit{set("/header_to_allow_outbound", `[]`)},
			want: []Violation{{"/header_to_allow_outbound",
				`unknown field "header_to_allow_outbound"; it is only allowed on bff_to_gateway, gateway_to_adapter documents`}},
		},
		{
			name:  "http_retry not on adapter",
			base:  "adapter",
			edits: []edit{set("/http_retry", `{}`)},
			want: []Violation{{"/http_retry",
				`unknown field "http_retry"; it is only allowed on bff_to_gateway, browser_to_bff, gateway_to_adapter documents`}},
		},
		{
			name:  "owner-policy field at the top of gateway_to_adapter belongs under adapter",
			base:  "gateway_to_adapter",
			edits: []edit{set("/idempotency_storage", `{"tier": "default", "ttl": "24h"}`)},
			want:  []Violation{{"/idempotency_storage", `unknown field "idempotency_storage"; it belongs under "adapter"`}},
		},
		{
			name:  "field one level too high",
			base:  "browser_to_bff",
			edits: []edit{set("/role", `"validate_only"`), set("/http_idempotency/methods", `["POST"]`)},
			want: []Violation{
				{"/http_idempotency/methods", `unknown field "methods"; it belongs under "require_key"`},
				{"/role", `unknown field "role"; it belongs under "http_idempotency"`},
			},
		},
		{
			name:  "field two levels too high gets no placement hint",
			base:  "gateway_to_adapter",
			edits: []edit{set("/status", `409`)},
			want:  []Violation{{"/status", `unknown field "status"` + noTypos}},
		},
		{
			name:  "unknown nested field lists the allowed names",
			base:  "bff_to_gateway",
			edits: []edit{set("/http_retry/retries", `3`)},
			want:  []Violation{{"/http_retry/retries", `unknown field "retries"; allowed: ` + retryList}},
		},
		{
			name:  "unknown field in an operation",
			base:  "browser_to_bff",
			edits: []edit{set("/operations/1/sate_changing", `true`)},
			want:  []Violation{{"/operations/1/sate_changing", `unknown field "sate_changing"; did you mean "state_changing"?`}},
		},
		{
			name:  "unknown field in example",
			base:  "browser_to_bff",
			edits: []edit{set("/operations/0/example/query", `{}`)},
			want:  []Violation{{"/operations/0/example/query", `unknown field "query"; allowed: body, headers`}},
		},
		{
			name:  "unknown field in embedded adapter policy",
			base:  "gateway_to_adapter",
			edits: []edit{set("/adapter/contract_version", `"v1"`), set("/adapter/idempotency_ttl", `"24h"`)},
			want: []Violation{
				{"/adapter/contract_version", `unknown field "contract_version"` + noTypos},
				{"/adapter/idempotency_ttl", `unknown field "idempotency_ttl"` + noTypos},
			},
		},
		{
			name:  "unknown field deep in embedded adapter policy",
			base:  "gateway_to_adapter",
			edits: []edit{set("/adapter/idempotency_conflict/on_payload_mismatch/code", `"x"`)},
			want:  []Violation{{"/adapter/idempotency_conflict/on_payload_mismatch/code", `unknown field "code"; allowed: error_code, status`}},
		},
		{
			name:  "unknown field name needing pointer escaping",
			base:  "adapter",
			edits: []edit{set("/scope_sources/a~1b", `"header:x"`)},
			want:  []Violation{{"/scope_sources/a~1b", `unknown field "a/b"; allowed: actor_id, tenant_id`}},
		},

		// --- extensions and $schema ---
		{
			name: "x- extensions allowed at every level",
			base: "gateway_to_adapter",
			edits: []edit{
				set("/x-top", `{"any": ["thing", 1]}`),
				set("/operations/0/x-op", `null`),
				set("/http_idempotency/x-idem", `1`),
				set("/http_retry/x-r", `true`),
				set("/adapter/idempotency_storage/x-s", `"s"`),
				set("/adapter/idempotency_conflict/on_payload_mismatch/x-m", `[]`),
			},
			want: nil,
		},
		{
			name:  "$schema allowed",
			base:  "bff_to_gateway",
			edits: []edit{set("/$schema", `"./schemas/bff_to_gateway.schema.json"`)},
			want:  nil,
		},

		// --- patterns ---
		{
			name:  "component id pattern",
			base:  "browser_to_bff",
			edits: []edit{set("/to", `"Web BFF"`)},
			want: []Violation{{"/to",
				`"to" must be a component id (1-63 characters a-z, 0-9, ".", "_", "-", starting with a letter or a digit), found "Web BFF"`}},
		},
		{
			name:  "operation key pattern",
			base:  "adapter",
			edits: []edit{set("/operations/3/operation_key", `"Payments.Void"`)},
			want: []Violation{{"/operations/3/operation_key",
				`"operation_key" must be an operation key (a-z, 0-9, ".", "_", ":", "-", starting with a letter or a digit), found "Payments.Void"`}},
		},
		{
			name:  "path pattern",
			base:  "bff_to_gateway",
			edits: []edit{set("/operations/0/path", `"orders"`)},
			want:  []Violation{{"/operations/0/path", `"path" must be a path starting with "/", found "orders"`}},
		},
		{
			name:  "duration pattern",
			base:  "adapter",
			edits: []edit{set("/idempotency_storage/ttl", `"1 day"`)},
			want:  []Violation{{"/idempotency_storage/ttl", `"ttl" must be a duration: an integer followed by s, m, h, d or w (e.g. "24h", "14d"), found "1 day"`}},
		},
		{
			name:  "scope source pattern",
			base:  "adapter",
			edits: []edit{set("/scope_sources/tenant_id", `"x-tenant-id"`)},
			want:  []Violation{{"/scope_sources/tenant_id", `"tenant_id" must be "header:<name>", found "x-tenant-id"`}},
		},
		{
			name:  "JSON pointer pattern",
			base:  "adapter",
			edits: []edit{set("/idempotency_fingerprint/exclude_fields/0", `"client_timestamp"`)},
			want: []Violation{{"/idempotency_fingerprint/exclude_fields/0",
				`"exclude_fields"[0] must be a non-empty JSON Pointer (starting with "/", "~" only as "~0" or "~1"), found "client_timestamp"`}},
		},

		// --- sizes and ranges ---
		{
			name:  "operations minItems",
			base:  "adapter",
			edits: []edit{set("/operations", `[]`)},
			want:  []Violation{{"/operations", `"operations" must not be empty`}},
		},
		{
			name:  "empty header name",
			base:  "browser_to_bff",
			edits: []edit{set("/header_to_allow_inbound/1", `""`)},
			want:  []Violation{{"/header_to_allow_inbound/1", "\"header_to_allow_inbound\"[1] must be an HTTP header name (an RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~), found \"\""}},
		},
		{
			name:  "header name with a space",
			base:  "browser_to_bff",
			edits: []edit{set("/header_to_allow_inbound/1", `"x key"`)},
			want:  []Violation{{"/header_to_allow_inbound/1", "\"header_to_allow_inbound\"[1] must be an HTTP header name (an RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~), found \"x key\""}},
		},
		{
			name:  "empty exclude_fields entry",
			base:  "adapter",
			edits: []edit{set("/idempotency_fingerprint/exclude_fields/0", `""`)},
			want: []Violation{{"/idempotency_fingerprint/exclude_fields/0",
				`"exclude_fields"[0] must be a non-empty JSON Pointer (starting with "/", "~" only as "~0" or "~1"), found ""`}},
		},
		{
			name:  "exclude_fields entry with a bad escape",
			base:  "adapter",
			edits: []edit{set("/idempotency_fingerprint/exclude_fields/0", `"/a~2"`)},
			want: []Violation{{"/idempotency_fingerprint/exclude_fields/0",
				`"exclude_fields"[0] must be a non-empty JSON Pointer (starting with "/", "~" only as "~0" or "~1"), found "/a~2"`}},
		},
		{
			name:  "wait_timeout_ms beyond a day",
			base:  "adapter",
			edits: []edit{set("/idempotency_inflight/wait_timeout_ms", `1e999`)},
			want: []Violation{{"/idempotency_inflight/wait_timeout_ms",
				`"wait_timeout_ms" must be milliseconds from 0 to 86400000, found 1e999`}},
		},
		{
			name:  "lease_ms of zero",
			base:  "adapter",
			edits: []edit{set("/idempotency_inflight/lease_ms", `0`)},
			want: []Violation{{"/idempotency_inflight/lease_ms",
				`"lease_ms" must be milliseconds from 1 to 86400000, found 0`}},
		},
		{
			name:  "key max_length beyond 8192",
			base:  "adapter",
			edits: []edit{set("/http_idempotency/key_format", `{"max_length": 8193}`)},
			want: []Violation{{"/http_idempotency/key_format/max_length",
				`"max_length" must be at most 8192, found 8193`}},
		},
		{
			name:  "max_records of zero",
			base:  "adapter",
			edits: []edit{set("/idempotency_storage/max_records", `0`)},
			want: []Violation{{"/idempotency_storage/max_records",
				`"max_records" must be at least 1, found 0`}},
		},
		{
			name:  "max_bytes of zero",
			base:  "adapter",
			edits: []edit{set("/idempotency_storage/max_bytes", `0`)},
			want: []Violation{{"/idempotency_storage/max_bytes",
				`"max_bytes" must be at least 1, found 0`}},
		},
		{
			name:  "max_tenant_percent of zero",
			base:  "adapter",
			edits: []edit{set("/idempotency_storage/max_tenant_percent", `0`)},
			want: []Violation{{"/idempotency_storage/max_tenant_percent",
				`"max_tenant_percent" must be at least 1, found 0`}},
		},
		{
			name:  "max_tenant_percent beyond 100",
			base:  "adapter",
			edits: []edit{set("/idempotency_storage/max_tenant_percent", `101`)},
			want: []Violation{{"/idempotency_storage/max_tenant_percent",
				`"max_tenant_percent" must be at most 100, found 101`}},
		},
		{
			name:  "max_bytes a string",
			base:  "adapter",
			edits: []edit{set("/idempotency_storage/max_bytes", `"1MB"`)},
			want: []Violation{{"/idempotency_storage/max_bytes",
				`"max_bytes" must be an integer, found string`}},
		},
		{
			name:  "empty contract_version",
			base:  "adapter",
			edits: []edit{set("/contract_version", `""`)},
			want:  []Violation{{"/contract_version", `"contract_version" must not be empty`}},
		},
		{
			name:  "status out of range",
			base:  "adapter",
			edits: []edit{set("/idempotency_inflight/status", `42`), set("/idempotency_conflict/on_payload_mismatch/status", `600`)},
			want: []Violation{
				{"/idempotency_conflict/on_payload_mismatch/status", `"status" must be an HTTP status code (integer 100-599), found 600`},
				{"/idempotency_inflight/status", `"status" must be an HTTP status code (integer 100-599), found 42`},
			},
		},
		{
			name:  "minimum",
			base:  "bff_to_gateway",
			edits: []edit{set("/http_retry/max_attempts", `0`), set("/http_retry/backoff/multiplier", `0.5`)},
			want: []Violation{
				{"/http_retry/backoff/multiplier", `"multiplier" must be at least 1, found 0.5`},
				{"/http_retry/max_attempts", `"max_attempts" must be at least 1, found 0`},
			},
		},

		// --- conditional http_idempotency ---
		{
			name:  "http_idempotency required by a POST operation",
			base:  "bff_to_gateway",
			edits: []edit{del("/http_idempotency")},
			want:  []Violation{{"/http_idempotency", `missing required field "http_idempotency" (operation "orders.create" is state-changing)`}},
		},
		{
			name:  "http_idempotency required by state_changing true on GET",
			base:  "adapter",
			edits: []edit{del("/http_idempotency"), set("/operations", `[{"operation_key": "reports.run", "method": "GET", "path": "/r", "state_changing": true}]`)},
			want:  []Violation{{"/http_idempotency", `missing required field "http_idempotency" (operation "reports.run" is state-changing)`}},
		},
		{
			name:  "http_idempotency reason names the first state-changing operation",
			base:  "browser_to_bff",
			edits: []edit{del("/http_idempotency"), set("/operations/0/state_changing", `false`), set("/operations/1/method", `"DELETE"`), set("/operations/1/state_changing", `true`)},
			want:  []Violation{{"/http_idempotency", `missing required field "http_idempotency" (operation "orders.get" is state-changing)`}},
		},
		{
			name:  "http_idempotency reason without an operation key",
			base:  "bff_to_gateway",
			edits: []edit{del("/http_idempotency"), del("/operations/0/operation_key")},
			want: []Violation{
				{"/http_idempotency", `missing required field "http_idempotency" (operation /operations/0 is state-changing)`},
				{"/operations/0/operation_key", `missing required field "operation_key"`},
			},
		},
		{
			name:  "http_idempotency optional when POST is declared not state-changing",
			base:  "bff_to_gateway",
			edits: []edit{del("/http_idempotency"), set("/operations/0/state_changing", `false`)},
			want:  nil,
		},
		{
			name:  "http_idempotency optional for read-only operations",
			base:  "browser_to_bff",
			edits: []edit{del("/http_idempotency"), set("/operations", `[{"operation_key": "a", "method": "GET", "path": "/a"}, {"operation_key": "b", "method": "HEAD", "path": "/b"}]`)},
			want:  nil,
		},

		// --- anyOf values: one message per value ---
		{
			name:  "retry_on items",
			base:  "bff_to_gateway",
			edits: []edit{set("/http_retry/retry_on", `["timeout", 503, "teapot", 700, "418", true]`)},
			want: []Violation{
				{"/http_retry/retry_on/2", `"retry_on"[2] must be one of connect_error, timeout, or a status code 100-599, found "teapot"`},
				{"/http_retry/retry_on/3", `"retry_on"[3] must be one of connect_error, timeout, or a status code 100-599, found 700`},
				{"/http_retry/retry_on/4", `"retry_on"[4] must be one of connect_error, timeout, or a status code 100-599, found "418"`},
				{"/http_retry/retry_on/5", `"retry_on"[5] must be one of connect_error, timeout, or a status code 100-599, found true`},
			},
		},
		{
			name:  "retry_on accepts 500 (conservativeness is a rule, not shape)",
			base:  "bff_to_gateway",
			edits: []edit{set("/http_retry/retry_on", `["500", 500, 418]`)},
			want:  nil,
		},
		{
			name:  "fingerprint inputs",
			base:  "adapter",
			edits: []edit{set("/idempotency_fingerprint/inputs", `["body", "cookie", "header:", {}]`)},
			want: []Violation{
				{"/idempotency_fingerprint/inputs/1", `"inputs"[1] must be one of method, path, query, body, or "header:<name>", found "cookie"`},
				{"/idempotency_fingerprint/inputs/2", `"inputs"[2] must be one of method, path, query, body, or "header:<name>", found "header:"`},
				{"/idempotency_fingerprint/inputs/3", `"inputs"[3] must be one of method, path, query, body, or "header:<name>", found an object`},
			},
		},

		// --- envelope ---
		{
			name:  "missing boundary uses the envelope",
			base:  "adapter",
			edits: []edit{del("/boundary"), set("/bogus", `1`)},
			want:  []Violation{{"/boundary", `missing required field "boundary"`}},
		},
		{
			name:  "unknown boundary uses the envelope",
			base:  "adapter",
			edits: []edit{set("/boundary", `"browser"`), set("/spec_version", `"v1"`)},
			want: []Violation{
				{"/boundary", `"boundary" must be one of ` + kindsList + `, found "browser"`},
				{"/spec_version", `"spec_version" must be "idemlint.boundary/v1", found "v1"`},
			},
		},
		{
			name:  "boundary of the wrong type uses the envelope",
			base:  "adapter",
			edits: []edit{set("/boundary", `4`)},
			want:  []Violation{{"/boundary", `"boundary" must be one of ` + kindsList + `, found 4`}},
		},

		// --- several errors: sorted by pointer then message ---
		{
			name: "several errors sorted",
			base: "gateway_to_adapter",
			edits: []edit{
				set("/to", `"A"`),
				set("/adapter/idempotency_inflight/policy", `"block"`),
				set("/operations/1/method", `1`),
				set("/from", `""`),
				del("/http_idempotency"),
			},
			want: []Violation{
				{"/adapter/idempotency_inflight/policy", `"policy" must be one of "wait", "reject", found "block"`},
				{"/from", `"from" must be a component id (1-63 characters a-z, 0-9, ".", "_", "-", starting with a letter or a digit), found ""`},
				{"/http_idempotency", `missing required field "http_idempotency" (operation "orders.create" is state-changing)`},
				{"/operations/1/method", `"method" must be one of ` + methods + `, found 1`},
				{"/to", `"to" must be a component id (1-63 characters a-z, 0-9, ".", "_", "-", starting with a letter or a digit), found "A"`},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, ok := validDocs[tc.base]
			if !ok {
				t.Fatalf("unknown base %q", tc.base)
			}
			doc := decode(t, src)
			for _, e := range tc.edits {
				apply(t, doc, e)
			}
			got := Validate(doc)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
			for _, v := range got {
				checkMessage(t, v.Message)
			}
		})
	}
}

// checkMessage asserts a message is one line and leaks no library text or
// schema URLs.
func checkMessage(t *testing.T, msg string) {
	t.Helper()
	for _, bad := range []string{"\n", "https://", "schema.json", "#/$defs", "jsonschema", "missing property", "additional properties", "got ", "want "} {
		if strings.Contains(msg, bad) {
			t.Errorf("message %q contains %q", msg, bad)
		}
	}
}

func TestValidateNonObjectDocuments(t *testing.T) {
	tests := []struct {
		src  string
		want []Violation
	}{
		{`[]`, []Violation{{"", `document must be an object, found array`}}},
		{`"adapter"`, []Violation{{"", `document must be an object, found string`}}},
		{`null`, []Violation{{"", `document must be an object, found null`}}},
		{`{}`, []Violation{
			{"/boundary", `missing required field "boundary"`},
			{"/spec_version", `missing required field "spec_version"`},
		}},
	}
	for _, tc := range tests {
		got := Validate(decode(t, tc.src))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Validate(%s) mismatch (-want +got):\n%s", tc.src, diff)
		}
	}
}

func TestValidateDeduplicates(t *testing.T) {
	got := finish([]Violation{{"/b", "x"}, {"/a", "y"}, {"/b", "x"}, {"/a", "b"}, {"/a", "y"}})
	want := []Violation{{"/a", "b"}, {"/a", "y"}, {"/b", "x"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("finish mismatch (-want +got):\n%s", diff)
	}
}

func TestValidateConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			doc := decode(t, validAdapter)
			for j := 0; j < 20; j++ {
				if got := Validate(doc); len(got) != 0 {
					t.Errorf("Validate = %v", got)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestKinds(t *testing.T) {
	want := []string{"adapter", "bff_to_gateway", "browser_to_bff", "gateway_to_adapter"}
	got := Kinds()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Kinds() mismatch (-want +got):\n%s", diff)
	}
	got[0] = "mutated"
	if Kinds()[0] != "adapter" {
		t.Error("Kinds() returns shared storage")
	}
}

func TestSource(t *testing.T) {
	names := append(Kinds(), "common", "envelope")
	for _, name := range names {
		src, ok := Source(name)
		if !ok {
			t.Errorf("Source(%q): not found", name)
			continue
		}
		var doc map[string]any
		if err := json.Unmarshal(src, &doc); err != nil {
			t.Errorf("Source(%q) is not valid JSON: %v", name, err)
			continue
		}
		if got, want := doc["$id"], baseURL+name+".schema.json"; got != want {
			t.Errorf("Source(%q) $id = %v, want %s", name, got, want)
		}
		if got, want := doc["$schema"], "https://json-schema.org/draft/2020-12/schema"; got != want {
			t.Errorf("Source(%q) $schema = %v, want %s", name, got, want)
		}
		src[0] = 'X' // callers may not corrupt the embedded copy
		if again, _ := Source(name); again[0] != '{' {
			t.Errorf("Source(%q) returns shared storage", name)
		}
	}
	for _, name := range []string{"", "nope", "config/../adapter", "adapter.schema", "../schemas/adapter"} {
		if src, ok := Source(name); ok || src != nil {
			t.Errorf("Source(%q) = %d bytes, %v; want nil, false", name, len(src), ok)
		}
	}
}

// TestKindSchemasDeclareTheirKind checks the file name, the boundary const and
// the $id agree, and that each kind is an accepted boundary of the envelope.
func TestKindSchemasDeclareTheirKind(t *testing.T) {
	env, _ := Source("envelope")
	for _, k := range Kinds() {
		src, _ := Source(k)
		var doc struct {
			Properties struct {
				Boundary struct {
					Const string `json:"const"`
				} `json:"boundary"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(src, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Properties.Boundary.Const != k {
			t.Errorf("%s: boundary const = %q", k, doc.Properties.Boundary.Const)
		}
		if !bytes.Contains(env, []byte(`"`+k+`"`)) {
			// The envelope refers to common's boundaryKind; check there.
			common, _ := Source("common")
			if !bytes.Contains(common, []byte(`"`+k+`"`)) {
				t.Errorf("kind %s not in the boundary enum", k)
			}
		}
	}
}

// TestEveryPropertyHasADescription walks the raw schemas: every entry of
// "properties" and "patternProperties" carries a description (editors show
// them). The internal "if" of the conditional is exempt.
func TestEveryPropertyHasADescription(t *testing.T) {
	for _, name := range append(Kinds(), "common", "envelope") {
		src, _ := Source(name)
		var doc any
		if err := json.Unmarshal(src, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(v any, path string)
		walk = func(v any, path string) {
			switch v := v.(type) {
			case map[string]any:
				for k, child := range v {
					if k == "if" {
						continue
					}
					if k == "properties" || k == "patternProperties" {
						props, _ := child.(map[string]any)
						for p, ps := range props {
							m, _ := ps.(map[string]any)
							if d, _ := m["description"].(string); d == "" {
								t.Errorf("%s: %s/%s/%s has no description", name, path, k, p)
							}
						}
					}
					walk(child, path+"/"+k)
				}
			case []any:
				for i, child := range v {
					walk(child, fmt.Sprintf("%s/%d", path, i))
				}
			}
		}
		walk(doc, "")
	}
}

// TestEveryPatternAndAnyOfHasAPhrase makes sure no failure falls back to
// showing a raw regular expression or a generic anyOf message.
func TestEveryPatternAndAnyOfHasAPhrase(t *testing.T) {
	s := load()
	for loc, sch := range s.byLoc {
		if strings.Contains(loc, "httpIdempotencyWhenStateChanging/then/if") {
			continue // evaluated for its result only, never reported
		}
		if (sch.Pattern != nil || len(sch.AnyOf) > 0 || len(sch.OneOf) > 0) && s.expect[loc] == "" {
			t.Errorf("%s has a pattern or anyOf but no phrase in expectations", loc)
		}
	}
	if len(s.expect) != len(expectations) {
		t.Errorf("expectations resolved %d of %d $defs", len(s.expect), len(expectations))
	}
}

// TestNoNetwork checks compilation uses only embedded schemas: the loader
// refuses anything else, so a $ref to a remote or file URL fails to compile
// instead of being fetched.
func TestNoNetwork(t *testing.T) {
	c, err := newCompiler()
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"https://example.com/remote.schema.json", "file:///etc/passwd", baseURL + "missing.schema.json"} {
		url := "https://github.com/idemlint/idemlint/schemas/v1/test-" + strconv.Itoa(len(ref)) + ".json"
		if err := c.AddResource(url, map[string]any{"$ref": ref}); err != nil {
			t.Fatal(err)
		}
		_, err := c.Compile(url)
		if err == nil {
			t.Errorf("compiling a $ref to %s succeeded; want refusal", ref)
			continue
		}
		var lerr *jsonschema.LoadURLError
		if !errors.As(err, &lerr) || !strings.Contains(lerr.Err.Error(), "refusing to load") {
			t.Errorf("compiling a $ref to %s: %v; want a refusal from the embedded loader", ref, err)
		}
	}

	// The loader itself: embedded URLs served, everything else refused.
	docs, err := embeddedDocs()
	if err != nil {
		t.Fatal(err)
	}
	l := embeddedLoader{}
	for file, doc := range docs {
		l[baseURL+file] = doc
	}
	if _, err := l.Load(baseURL + "adapter.schema.json"); err != nil {
		t.Errorf("loader refused an embedded schema: %v", err)
	}
	for _, u := range []string{"https://example.com/x.json", "http://json-schema.org/draft-07/schema", "file:///tmp/x.json"} {
		if _, err := l.Load(u); err == nil {
			t.Errorf("loader loaded %s", u)
		}
	}
}

// recordingLoader fails every load and records the URL asked for.
type recordingLoader struct{ urls []string }

func (l *recordingLoader) Load(url string) (any, error) {
	l.urls = append(l.urls, url)
	return nil, fmt.Errorf("recordingLoader: %s", url)
}

// TestCompileNeedsNoLoader compiles every embedded schema with a loader that
// records calls: the draft 2020-12 metaschema comes from the library's own
// embedded copy and every $ref resolves to an AddResource'd schema, so the
// loader is never consulted.
func TestCompileNeedsNoLoader(t *testing.T) {
	c, err := newCompiler()
	if err != nil {
		t.Fatal(err)
	}
	l := &recordingLoader{}
	c.UseLoader(l)
	for _, name := range append(Kinds(), "common", "envelope") {
		if _, err := c.Compile(schemaURL(name)); err != nil {
			t.Errorf("Compile(%s): %v", name, err)
		}
	}
	if len(l.urls) != 0 {
		t.Errorf("compilation asked the loader for %v", l.urls)
	}
}

func TestSubject(t *testing.T) {
	doc := decode(t, `{"a": {"b": [1, [2, 3]], "0": {"c": 1}}}`)
	tests := []struct {
		loc  []string
		want string
	}{
		{nil, "document"},
		{[]string{"a"}, `"a"`},
		{[]string{"a", "b", "0"}, `"b"[0]`},
		{[]string{"a", "b", "1", "0"}, `"b"[1][0]`},
		{[]string{"a", "0"}, `"0"`},
		{[]string{"a", "0", "c"}, `"c"`},
	}
	for _, tc := range tests {
		if got := subject(doc, tc.loc); got != tc.want {
			t.Errorf("subject(%v) = %s, want %s", tc.loc, got, tc.want)
		}
	}
}

func TestDisplayCutsLongValues(t *testing.T) {
	long := strings.Repeat("a", 100)
	got := display(long)
	if want := strconv.Quote(strings.Repeat("a", maxShown)) + "..."; got != want {
		t.Errorf("display(long) = %s, want %s", got, want)
	}
	if !slices.Contains([]string{"null"}, display(nil)) {
		t.Error("display(nil)")
	}
}

// BenchmarkValidate validates a 2 KB adapter document. It is why the
// validator is santhosh-tekuri/jsonschema v6, not the v5 the design names: on the same
// documents v5 took 280-355 us and 1,500-2,200 allocations per document
// against 111-118 us and 680-950 for v6, and v6 reports errors as typed
// kinds, which lets IDL002 word them itself.
func BenchmarkValidate(b *testing.B) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(validAdapter)); err != nil {
		b.Fatal(err)
	}
	if n := compact.Len(); n < 1700 || n > 2400 {
		b.Fatalf("benchmark document is %d bytes compacted, want about 2 KB", n)
	}
	doc := decode(b, validAdapter)
	if got := Validate(doc); len(got) != 0 {
		b.Fatalf("benchmark document invalid: %v", got)
	}
	b.ReportAllocs()
	b.SetBytes(int64(compact.Len()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if Validate(doc) != nil {
			b.Fatal("violations")
		}
	}
}

func BenchmarkValidateInvalid(b *testing.B) {
	doc := decode(b, validAdapter)
	m := doc.(map[string]any)
	m["idempotency_scop"] = []any{}
	m["idempotency_storage"].(map[string]any)["ttl"] = "1 day"
	delete(m, "http_idempotency")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(Validate(doc)) != 3 {
			b.Fatal("want 3 violations")
		}
	}
}
