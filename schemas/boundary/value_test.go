package boundary_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// TestPlacesBeyondThePackedRange decodes a document whose places do not
// all pack into a place's 8 bytes (a column past 4095, array indexes past
// 32767, parents farther back than 65535 places) and holds every
// operation's method to the line, column and pointer of its value, in the
// document's places and in the places cut to the methods (whose encoding
// is another).
func TestPlacesBeyondThePackedRange(t *testing.T) {
	const ops = 40000
	pad := strings.Repeat("p", 5000)
	var b strings.Builder
	b.WriteString("{\"spec_version\": \"idemlint.boundary/v1\", \"boundary\": \"browser_to_bff\", \"from\": \"web\", \"to\": \"bff\",\n\"operations\": [\n")
	for i := range ops {
		sep := ","
		if i == ops-1 {
			sep = ""
		}
		if i%1000 == 7 {
			// A long line: this method's column is past 4095.
			fmt.Fprintf(&b, "{\"x-pad\": %q, \"method\": \"POST\", \"path\": \"/p\"}%s\n", pad, sep)
			continue
		}
		fmt.Fprintf(&b, "{\"method\": \"POST\", \"path\": \"/p\"}%s\n", sep)
	}
	b.WriteString("]}\n")
	doc, _, problems := boundary.Parse("big.json", []byte(b.String()))
	if doc == nil || len(problems) > 0 {
		t.Fatalf("document did not decode: %v", problems)
	}
	if len(doc.Operations.Items) != ops {
		t.Fatalf("decoded %d operations, want %d", len(doc.Operations.Items), ops)
	}
	methods := make([]boundary.Pos, ops)
	cut := make([]*boundary.Pos, ops)
	for i, op := range doc.Operations.Items {
		methods[i], cut[i] = op.Method.Pos, &methods[i]
	}
	kept := doc.Cut(cut)
	for i, op := range doc.Operations.Items {
		want := boundary.Place{Line: i + 3, Column: len(`{"method": `) + 1, Pointer: fmt.Sprintf("/operations/%d/method", i)}
		if i%1000 == 7 {
			want.Column = len(`{"x-pad": "`) + len(pad) + len(`", "method": `) + 1
		}
		if diff := cmp.Diff(want, doc.Place(op.Method.Pos)); diff != "" {
			t.Fatalf("operation %d: method placed wrong (-want +got):\n%s", i, diff)
		}
		if i%997 == 0 || i%1000 == 7 {
			if diff := cmp.Diff(want, kept.Place(methods[i])); diff != "" {
				t.Fatalf("operation %d: method placed wrong once cut (-want +got):\n%s", i, diff)
			}
		}
	}
	if got := doc.Place(doc.Operations.Pos); got != (boundary.Place{Line: 2, Column: 15, Pointer: "/operations"}) {
		t.Errorf("operations placed at %+v", got)
	}
}

// A small cut table is encoded otherwise than a document's places: its
// values keep their line, column and pointer however far apart they are,
// a column past 4095 and a line past a million included.
func TestCutPlacesEncoded(t *testing.T) {
	pad := strings.Repeat("p", 5000)
	src := "{\"spec_version\": \"idemlint.boundary/v1\", \"boundary\": \"browser_to_bff\", \"from\": \"web\", \"to\": \"bff\", \"operations\": [\n" +
		`{"x-pad": "` + pad + `", "method": "POST", "path": "/p"},` + strings.Repeat("\n", 1<<20) + `{"method": "GET", "path": "/q"}]}`
	doc, _, problems := boundary.Parse("far.json", []byte(src))
	if doc == nil || len(problems) > 0 {
		t.Fatalf("document did not decode: %v", problems)
	}
	ops := doc.Operations.Items
	pos := []boundary.Pos{doc.To.Pos, ops[0].Method.Pos, ops[1].Path.Pos}
	var want []boundary.Place
	cut := make([]*boundary.Pos, len(pos))
	for i := range pos {
		want = append(want, doc.Place(pos[i]))
		cut[i] = &pos[i]
	}
	kept := doc.Cut(cut)
	var got []boundary.Place
	for _, p := range pos {
		got = append(got, kept.Place(p))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("places moved by the cut (-document +cut):\n%s", diff)
	}
	if want[1].Column <= 4095 || want[2].Line <= 1<<20 {
		t.Errorf("the method is at column %d and the path at line %d: the test needs them past 4095 and 1<<20", want[1].Column, want[2].Line)
	}
	if !kept.Has("/operations/1") || kept.Has("/operations/1/method") || kept.Pointer(pos[2]) != "/operations/1/path" {
		t.Error("the cut table holds the second operation's method, or not the operation or its path")
	}
}

// A cut table keeps the member names beyond the decoder's own only when
// one of its values is named by one: a header name of an example, here.
func TestCutPlacesNames(t *testing.T) {
	src := `{"spec_version": "idemlint.boundary/v1", "boundary": "browser_to_bff", "from": "web", "to": "bff", "x-owner": {"team": "shop"},
		"operations": [{"method": "POST", "path": "/p", "example": {"headers": {"bad name": "1"}}}]}`
	doc, _, problems := boundary.Parse("names.json", []byte(src))
	if doc == nil || len(problems) > 0 {
		t.Fatalf("document did not decode: %v", problems)
	}
	bad := doc.Operations.Items[0].Example.BadHeaderNames
	if len(bad) != 1 {
		t.Fatalf("bad header names %+v, want one", bad)
	}
	at, to := bad[0].Pos, doc.To.Pos
	named, plain := doc.Cut([]*boundary.Pos{&at}), doc.Cut([]*boundary.Pos{&to})
	if got := named.Pointer(at); got != "/operations/0/example/headers/bad name" {
		t.Errorf("the bad header name is at %q once cut", got)
	}
	if got := plain.Pointer(to); got != "/to" {
		t.Errorf("to is at %q once cut", got)
	}
}
