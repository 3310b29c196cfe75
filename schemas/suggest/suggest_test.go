package suggest

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"enabeld", "enabled", 1}, // a transposition is one edit
		{"edge-gw", "edge-gwy", 1},
		{"edge-gw", "edge-gateway", 5},
		{"orders.crate", "orders.create", 1},
		{"ca", "abc", 3}, // optimal string alignment: no edit of a transposed pair
		{"héllo", "hello", 1},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestNear(t *testing.T) {
	rules := []string{"IDL102", "IDL112", "IDL120", "IDL201", "IDL202", "IDL210"}
	for _, tc := range []struct {
		name       string
		candidates []string
		want       []string
	}{
		{"idl112", rules, []string{"IDL112"}},
		{"IDL12", rules, []string{"IDL102", "IDL112", "IDL120"}},
		{"IDL20", rules, []string{"IDL120", "IDL201", "IDL202", "IDL210"}},
		{"IDL999", rules, nil},
		{"edge-gwy", []string{"edge-gw", "orders-adapter"}, []string{"edge-gw"}},
		{"edge-gateway", []string{"edge-gw"}, nil}, // five edits: another name
		{"mod", []string{"mode", "enabled"}, []string{"mode"}},
		{"ab", []string{"ac", "abc"}, nil}, // a two-rune name matches nothing
		{"edge-gw", []string{"edge-gw"}, nil},
	} {
		if diff := cmp.Diff(tc.want, Near(tc.name, tc.candidates)); diff != "" {
			t.Errorf("Near(%q) (-want +got):\n%s", tc.name, diff)
		}
	}
	if got := Within("IDL999", rules, 1); got != nil {
		t.Errorf("Within(IDL999, 1) = %q, want none", got)
	}
	if got := One("IDL20", rules); got != "" {
		t.Errorf("One(IDL20) = %q, want none of three", got)
	}
	if got := One("orders.crate", []string{"orders.create", "orders.get"}); got != "orders.create" {
		t.Errorf("One(orders.crate) = %q", got)
	}
}

// TestBagDistanceBoundsDistance: the cheap filter never exceeds the
// distance, or Within would drop a candidate it should suggest.
func TestBagDistanceBoundsDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = "abcde-.1"[rng.IntN(8)]
		}
		return string(b)
	}
	for range 20000 {
		a, b := word(), word()
		if bag, ok := bagDistance(a, b); !ok || bag > Distance(a, b) {
			t.Fatalf("bagDistance(%q, %q) = %d, %v; Distance %d", a, b, bag, ok, Distance(a, b))
		}
	}
	if _, ok := bagDistance("héllo", "hello"); ok {
		t.Error("bagDistance judged a non-ASCII string")
	}
}
