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
// operation's method to the line, column and pointer of its value.
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
	for i, op := range doc.Operations.Items {
		want := boundary.Place{Line: i + 3, Column: len(`{"method": `) + 1, Pointer: fmt.Sprintf("/operations/%d/method", i)}
		if i%1000 == 7 {
			want.Column = len(`{"x-pad": "`) + len(pad) + len(`", "method": `) + 1
		}
		if diff := cmp.Diff(want, doc.Place(op.Method.Pos)); diff != "" {
			t.Fatalf("operation %d: method placed wrong (-want +got):\n%s", i, diff)
		}
	}
	if got := doc.Place(doc.Operations.Pos); got != (boundary.Place{Line: 2, Column: 15, Pointer: "/operations"}) {
		t.Errorf("operations placed at %+v", got)
	}
}
