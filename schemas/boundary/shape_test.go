package boundary_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// The decoder's verdict on the schema names the place of the first
// violation; schemas/verdict_test.go holds the verdict itself equal to
// the JSON Schema validator's on every fixture and many mutations.
func TestNonconformingPlace(t *testing.T) {
	const head = `{"spec_version": "idemlint.boundary/v1", "boundary": "bff_to_gateway", "from": "bff", "to": "gw",` + "\n"
	const ops = `"operations": [{"operation_key": "o.create", "method": "POST", "path": "/o"}]`
	for _, tc := range []struct {
		name, src string
		want      *boundary.Place
	}{
		{"conforms", head + ops + `, "http_idempotency": {"role": "passthrough"}, "x-owner": {"any": 1}}`, nil},
		{"unknown member", head + ops + `, "http_idempotency": {"role": "passthrough",` + "\n" + `  "require_keys": {}}}`,
			&boundary.Place{Line: 3, Column: 19, Pointer: "/http_idempotency/require_keys"}},
		{"bound", head + ops + `, "http_idempotency": {}, "http_retry": {"max_attempts": 101}}`,
			&boundary.Place{Line: 2, Column: 135, Pointer: "/http_retry/max_attempts"}},
		{"integer spelled as a fraction", head + ops + `, "http_idempotency": {}, "http_retry": {"max_attempts": 2.0}}`, nil},
		{"too few items", `{"spec_version": "idemlint.boundary/v1", "boundary": "adapter", "operations": []}`,
			&boundary.Place{Line: 1, Column: 79, Pointer: "/operations"}},
		{"missing member", `{"spec_version": "idemlint.boundary/v1", "boundary": "adapter", "contract_version": "v1",` + "\n" +
			`"operations": [{"operation_key": "o.get", "method": "GET", "path": "/o"}]}`,
			&boundary.Place{Line: 1, Column: 1, Pointer: ""}},
		{"state-changing without http_idempotency", head + ops + `}`, &boundary.Place{Line: 1, Column: 1, Pointer: ""}},
		{"unknown kind", `{"spec_version": "idemlint.boundary/v1", "boundary": "edge"}`,
			&boundary.Place{Line: 1, Column: 54, Pointer: "/boundary"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, problems := jsontree.Parse(tc.src)
			if root == nil || len(problems) > 0 {
				t.Fatalf("fixture does not parse: %v", problems)
			}
			doc := boundary.Decode("doc.json", tc.src, root)
			if diff := cmp.Diff(tc.want, doc.Nonconforming); diff != "" {
				t.Errorf("Nonconforming (-want +got):\n%s", diff)
			}
		})
	}
}
