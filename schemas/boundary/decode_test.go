package boundary_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"unsafe"
	"weak"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/jsontree"
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

// Documents decoded with one Strings hold one copy of each string they
// repeat, from whichever goroutine decodes them, and none of the text
// they were decoded from; without one, each document holds its own copy.
func TestDecodeSharedStrings(t *testing.T) {
	edge := func(i int) string {
		return fmt.Sprintf(`{"spec_version": "idemlint.boundary/v1", "boundary": "bff_to_gateway", "from": "shop-bff", "to": "edge-gw-%d",
			"operations": [{"operation_key": "orders.create", "method": "POST", "path": "/orders"}],
			"header_to_allow_inbound": ["x-session-id"]}`, i%2)
	}
	decode := func(src string, shared *boundary.Strings) *boundary.Document {
		root, problems := jsontree.Parse(src)
		if root == nil || len(problems) > 0 {
			t.Fatalf("does not parse: %v", problems)
		}
		return boundary.DecodeShared("edge.json", src, root, shared)
	}
	// held is every string of doc that is not a vocabulary word.
	held := func(doc *boundary.Document) []string {
		return []string{doc.From.Value, doc.To.Value, doc.Operations.Items[0].Key.Value, doc.Operations.Items[0].Path.Value, doc.HeaderAllowInbound.Items[0].Value}
	}
	shared := new(boundary.Strings)
	docs := make([]*boundary.Document, 8)
	var wg sync.WaitGroup
	for i := range docs {
		wg.Go(func() { docs[i] = decode(edge(i), shared) })
	}
	wg.Wait()
	for i, doc := range docs {
		src := edge(i)
		for j, s := range held(doc) {
			first := held(docs[i%2])[j]
			if unsafe.StringData(s) != unsafe.StringData(first) {
				t.Errorf("document %d holds its own copy of %q", i, s)
			}
			if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= uintptr(unsafe.Pointer(unsafe.StringData(src))) && p < uintptr(unsafe.Pointer(unsafe.StringData(src)))+uintptr(len(src)) {
				t.Errorf("document %d's %q points into its source text", i, s)
			}
		}
	}
	a, b := decode(edge(0), nil), decode(edge(0), nil)
	if unsafe.StringData(a.From.Value) == unsafe.StringData(b.From.Value) {
		t.Error("documents decoded without a Strings share a string")
	}
}

// A run drops its Strings once its files are decoded: the decoders that
// wait in their pool for the next document must not keep it alive.
func TestStringsReleased(t *testing.T) {
	src := `{"spec_version": "idemlint.boundary/v1", "boundary": "bff_to_gateway", "from": "shop-bff", "to": "edge-gw"}`
	root, problems := jsontree.Parse(src)
	if root == nil || len(problems) > 0 {
		t.Fatalf("does not parse: %v", problems)
	}
	shared := new(boundary.Strings)
	if doc := boundary.DecodeShared("edge.json", src, root, shared); doc.From.Value != "shop-bff" {
		t.Fatalf("from %q", doc.From.Value)
	}
	released := weak.Make(shared)
	shared = nil
	runtime.GC()
	if released.Value() != nil {
		t.Error("the Strings stays live after the documents were decoded")
	}
}
