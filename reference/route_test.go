package reference

import (
	"testing"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// op is an operation as the decoder would give it, for the router.
func op(key, method, path string) boundary.Operation {
	str := func(v string) boundary.String {
		return boundary.String{Field: boundary.Field{State: boundary.Valid}, Value: v}
	}
	return boundary.Operation{Key: str(key), Method: str(method), Path: str(path)}
}

func TestRouterMatch(t *testing.T) {
	ops := []boundary.Operation{
		op("create", "POST", "/orders"),
		op("get", "GET", "/orders/{id}"),
		op("search", "GET", "/orders/search"),
		op("cancel", "POST", "/orders/{id}/cancel"),
		op("line", "GET", "/orders/{id}/lines/{n}"),
		op("line-first", "GET", "/orders/{id}/lines/first"),
		op("root", "GET", "/"),
	}
	r := newRouter(ops)
	tests := []struct {
		method, path string
		want         string // "" for no match
	}{
		{"POST", "/orders", "create"},
		{"GET", "/orders", ""},
		{"POST", "/orders/", ""},
		{"GET", "/orders/42", "get"},
		{"GET", "/orders/search", "search"},
		{"GET", "/orders/", ""}, // a parameter is never empty
		{"POST", "/orders/42/cancel", "cancel"},
		{"POST", "/orders/42/cancel/now", ""},
		{"GET", "/orders/42/lines/7", "line"},
		{"GET", "/orders/42/lines/first", "line-first"},
		{"GET", "/", "root"},
		{"GET", "", ""},
		{"DELETE", "/orders/42", ""},
		{"GET", "/order/42", ""},
	}
	for _, tt := range tests {
		got := ""
		if i := r.match(tt.method, tt.path); i >= 0 {
			got = ops[i].Key.Value
		}
		if got != tt.want {
			t.Errorf("match(%s %s) = %q, want %q", tt.method, tt.path, got, tt.want)
		}
	}
}

func TestRouterLastParam(t *testing.T) {
	r := newRouter([]boundary.Operation{
		op("", "GET", "/orders/{id}"),
		op("", "GET", "/orders"),
	})
	if id, ok := r.lastParam(0, "/orders/42"); !ok || id != "42" {
		t.Errorf("lastParam(/orders/{id}, /orders/42) = %q, %v", id, ok)
	}
	if id, ok := r.lastParam(1, "/orders"); ok {
		t.Errorf("lastParam(/orders) = %q, true; the template has no parameter", id)
	}
}
