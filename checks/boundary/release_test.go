package boundary

import (
	"reflect"
	"testing"

	"github.com/idemlint/idemlint/checks/jsontree"
	"github.com/idemlint/idemlint/fixtures"
)

// TestReleaseDropsEveryNode walks every released fixture document by
// reflection: one *jsontree.Node left behind would keep the document's
// whole tree alive, and a set keeps thousands of documents.
func TestReleaseDropsEveryNode(t *testing.T) {
	docs, err := fixtures.Documents()
	if err != nil {
		t.Fatal(err)
	}
	released := 0
	for i, src := range docs {
		doc, _ := Parse("fixture.json", src)
		if doc == nil {
			continue
		}
		doc.Release()
		if path := findNode(reflect.ValueOf(doc), "doc", map[uintptr]bool{}); path != "" {
			t.Fatalf("fixture document %d:\n%s\nafter Release, %s still holds a node", i, src, path)
		}
		released++
	}
	if released < 100 {
		t.Fatalf("only %d documents checked", released)
	}
}

var nodeType = reflect.TypeOf((*jsontree.Node)(nil))

// findNode returns the path of a non-nil *jsontree.Node reachable from v,
// or "".
func findNode(v reflect.Value, path string, seen map[uintptr]bool) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		if v.Type() == nodeType {
			return path
		}
		if seen[v.Pointer()] {
			return ""
		}
		seen[v.Pointer()] = true
		return findNode(v.Elem(), path, seen)
	case reflect.Struct:
		for i := range v.NumField() {
			if p := findNode(v.Field(i), path+"."+v.Type().Field(i).Name, seen); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if p := findNode(v.Index(i), path+"[]", seen); p != "" {
				return p
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if p := findNode(it.Value(), path+"[key]", seen); p != "" {
				return p
			}
		}
	}
	return ""
}
