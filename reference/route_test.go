package reference

import (
	"testing"

	"github.com/idemlint/idemlint/checks/boundary"
)

func TestRouterMatch(t *testing.T) {
	ops := []boundary.Operation{
		{Key: "create", Method: "POST", Path: "/orders"},
		{Key: "get", Method: "GET", Path: "/orders/{id}"},
		{Key: "search", Method: "GET", Path: "/orders/search"},
		{Key: "cancel", Method: "POST", Path: "/orders/{id}/cancel"},
		{Key: "line", Method: "GET", Path: "/orders/{id}/lines/{n}"},
		{Key: "line-first", Method: "GET", Path: "/orders/{id}/lines/first"},
		{Key: "root", Method: "GET", Path: "/"},
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
			got = ops[i].Key
		}
		if got != tt.want {
			t.Errorf("match(%s %s) = %q, want %q", tt.method, tt.path, got, tt.want)
		}
	}
}

func TestRouterLastParam(t *testing.T) {
	r := newRouter([]boundary.Operation{
		{Method: "GET", Path: "/orders/{id}"},
		{Method: "GET", Path: "/orders"},
	})
	if id, ok := r.lastParam(0, "/orders/42"); !ok || id != "42" {
		t.Errorf("lastParam(/orders/{id}, /orders/42) = %q, %v", id, ok)
	}
	if id, ok := r.lastParam(1, "/orders"); ok {
		t.Errorf("lastParam(/orders) = %q, true; the template has no parameter", id)
	}
}
