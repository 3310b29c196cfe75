package boundary_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// The as_built entries of an edge are read with the place of each entry
// and member, so that IDL407 can point at the entry that names nothing.
func TestDecodeAsBuilt(t *testing.T) {
	src := `{"spec_version": "idemlint.boundary/v1", "boundary": "bff_to_gateway", "from": "bff", "to": "gw",
"as_built": [
  {"kind": "VirtualService", "name": "orders", "namespace": "shop"},
  "not an object",
  {"kind": "ApiGateway", "name": "Orders API"}
]}`
	doc, _, problems := boundary.Parse("edge.json", []byte(src))
	if doc == nil || len(problems) > 0 {
		t.Fatalf("does not parse: %v", problems)
	}
	type entry struct {
		Kind, Name, Namespace string
		At, NamespaceAt       boundary.Place
	}
	var got []entry
	for _, r := range doc.AsBuilt.Items {
		got = append(got, entry{r.Kind.Value, r.Name.Value, r.Namespace.Value, doc.Place(r.Pos), doc.Place(r.Namespace.Pos)})
	}
	want := []entry{
		{"VirtualService", "orders", "shop", boundary.Place{Line: 3, Column: 3, Pointer: "/as_built/0"},
			boundary.Place{Line: 3, Column: 61, Pointer: "/as_built/0/namespace"}},
		{"ApiGateway", "Orders API", "", boundary.Place{Line: 5, Column: 3, Pointer: "/as_built/2"}, boundary.Place{Line: 1, Column: 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("as_built (-want +got):\n%s", diff)
	}
	if p := doc.Place(doc.AsBuilt.Pos); p.Line != 2 || p.Column != 13 {
		t.Errorf("as_built at %d:%d, want 2:13", p.Line, p.Column)
	}
}
