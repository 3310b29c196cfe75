package openapi

import "testing"

func TestComponentIDFromTag(t *testing.T) {
	for tag, want := range map[string]string{
		"Returns & Refunds":   "returns-refunds",
		"  Returns--Refunds ": "returns-refunds",
		"Orders":              "orders",
		"v2 / Carts":          "v2-carts",
		"注文":                  "api",
		"":                    "api",
	} {
		if got := componentID(tag); got != want {
			t.Errorf("componentID(%q) = %q, want %q", tag, got, want)
		}
	}
}

// KeyHeader takes the header declared on the most writes among those whose
// name says idempotency, required or not; ties go to the first in path
// order; failing a name, a description that says idempotency; reads never
// count, nor names that are no header names.
func TestKeyHeader(t *testing.T) {
	op := func(method, template string, params ...Param) *Operation {
		return &Operation{Method: method, Template: template, HeaderParams: params}
	}
	key := Param{Name: "Idempotency-Key"}
	other := Param{Name: "X-Idempotency-Token", Required: true}
	vendor := Param{Name: "PayPal-Request-Id", Description: "Makes the call idempotent."}
	for _, tc := range []struct {
		name string
		ops  []*Operation
		want string
		ok   bool
	}{
		{"most writes win over first in order", []*Operation{op("POST", "/a", other), op("POST", "/b", key), op("PUT", "/c", key)}, "Idempotency-Key", true},
		{"a tie goes to the first in path order", []*Operation{op("POST", "/a", other), op("POST", "/b", key)}, "X-Idempotency-Token", true},
		{"reads do not count", []*Operation{op("GET", "/a", other), op("GET", "/b", other), op("POST", "/c", key)}, "Idempotency-Key", true},
		{"a name beats a description", []*Operation{op("POST", "/a", vendor), op("POST", "/b", vendor), op("POST", "/c", key)}, "Idempotency-Key", true},
		{"a description when no name says it", []*Operation{op("POST", "/a", Param{Name: "Prefer"}, vendor)}, "PayPal-Request-Id", true},
		{"no header name", []*Operation{op("POST", "/a", Param{Name: "Idempotency Key"})}, "x-idempotency-key", false},
		{"none", []*Operation{op("POST", "/a", Param{Name: "Prefer"})}, "x-idempotency-key", false},
	} {
		got, ok := KeyHeader(&API{Operations: tc.ops})
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: KeyHeader = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
