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
