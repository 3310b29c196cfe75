package reference

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDemo(t *testing.T) {
	e := newEngine(t, nil)
	d := NewDemo(e.Policy())
	create := func(body string) map[string]any {
		t.Helper()
		w := do(d, call{body: body})
		if w.Code != 201 || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("create %q: %d %s", body, w.Code, w.Body)
		}
		var res map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	jsonBody, text, empty := create(`{"a": [1]}`), create("plain text"), create("")
	for _, tt := range []struct {
		res  map[string]any
		want any
	}{
		{jsonBody, map[string]any{"a": []any{1.0}}},
		{text, "plain text"},
		{empty, nil},
	} {
		if diff := cmp.Diff(tt.want, tt.res["request"]); diff != "" || tt.res["operation"] != "orders.create" || tt.res["id"] == "" {
			t.Errorf("resource %v (-want +got request):\n%s", tt.res, diff)
		}
	}
	if jsonBody["id"] == text["id"] {
		t.Error("two creations got one id")
	}

	wantProblem(t, do(d, call{method: "GET", path: "/orders/unknown"}), http.StatusNotFound, "not_found")
	wantProblem(t, do(d, call{method: "PUT", path: "/orders"}), http.StatusNotFound, "not_found")
	if w := do(d, call{method: "GET", path: "/_effects"}); w.Body.String() != `{"count":4}` || d.Effects() != 4 {
		t.Errorf("effects: %s, %d; want 4 (three creations and one read)", w.Body, d.Effects())
	}
}
