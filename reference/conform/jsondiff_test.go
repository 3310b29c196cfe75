package conform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBodyDiff(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tt := range []struct {
		name, a, b string
		want       []string
	}{
		{"changed member", `{"id":"3f2a","n":1}`, `{"id":"9b1c","n":1.0}`, []string{`-/id: "3f2a"`, `+/id: "9b1c"`}},
		{"added, removed, nested, escaped names", `{"a":{"b/c":[1,2]},"gone":true}`, `{"a":{"b/c":[1,3,{"z":null}]},"new":"v"}`, []string{
			`-/a/b~1c/1: 2`, `+/a/b~1c/1: 3`, `+/a/b~1c/2: {"z":null}`, `-/gone: true`, `+/new: "v"`,
		}},
		{"type change", `{"amount":100}`, `{"amount":"100"}`, []string{`-/amount: 100`, `+/amount: "100"`}},
		{"whole body", `[1]`, `"s"`, []string{`-(whole body): [1]`, `+(whole body): "s"`}},
		{"same value", `{"a":1,"b":[1e2]}`, `{"b":[100.0], "a":1}`, []string{
			"the same JSON value, spelt differently:", `-{"a":1,"b":[1e2]}`, `+{"b":[100.0], "a":1}`,
		}},
		{"not JSON", `{"a":1}`, "<html>", []string{"not both JSON:", `-{"a":1}`, "+<html>"}},
		{"long value cut", `{"s":"a"}`, `{"s":"` + long + `"}`, []string{`-/s: "a"`, `+/s: "` + long[:diffWidth-9] + "..."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := bodyDiff([]byte(tt.a), []byte(tt.b), "A", "B", nil)
			want := "(-A +B)\n" + strings.Join(tt.want, "\n")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A secret in a value is redacted before the line is cut to width, so no
// part of it survives the cut.
func TestBodyDiffRedactsBeforeCutting(t *testing.T) {
	red := newRedactor([]string{secret})
	pad := strings.Repeat("p", diffWidth-17) // the cut falls 8 characters into the secret
	got := bodyDiff([]byte(`{"s":"a"}`), []byte(`{"s":"`+pad+`Bearer Zq7\/vX\"k9+Wm%3p\\R2 a"}`), "A", "B", red)
	if piece := secretPiece(got); piece != "" {
		t.Errorf("the diff shows %q of the secret:\n%s", piece, got)
	}
}
