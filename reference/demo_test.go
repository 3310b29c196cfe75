package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestDemoBytesAreBounded: large bodies make the demo forget older
// resources once they take DemoKeepsBytes.
func TestDemoBytesAreBounded(t *testing.T) {
	e := newEngine(t, nil)
	d := NewDemo(e.Policy())
	body := `{"note":"` + strings.Repeat("x", 1<<20-11) + `"}`
	for i := range 40 {
		if w := do(d, call{body: body}); w.Code != http.StatusCreated {
			t.Fatalf("create %d: %d", i, w.Code)
		}
	}
	d.mu.Lock()
	kept, bytes := len(d.order), d.bytes
	var counted int64
	for _, res := range d.resources {
		counted += int64(len(res))
	}
	d.mu.Unlock()
	if bytes > DemoKeepsBytes || counted != bytes || kept == 0 || kept >= 40 {
		t.Errorf("%d resources kept, %d bytes (counted %d); want at most %d bytes and the older ones forgotten", kept, counted, bytes, DemoKeepsBytes)
	}
}

// TestDemoHealth: /_health is up, and carries the warnings it was given.
func TestDemoHealth(t *testing.T) {
	d := NewDemo(newEngine(t, nil).Policy())
	if w := do(d, call{method: "GET", path: HealthPath}); w.Code != http.StatusOK || w.Body.String() != `{"status":"ok","warnings":[]}` {
		t.Errorf("health: %d %s", w.Code, w.Body)
	}
	d.Warnings = []string{"Redis persists nothing"}
	if w := do(d, call{method: "GET", path: HealthPath}); w.Code != http.StatusOK || w.Body.String() != `{"status":"warn","warnings":["Redis persists nothing"]}` {
		t.Errorf("health with a warning: %d %s", w.Code, w.Body)
	}
	if d.Effects() != 0 {
		t.Errorf("health counted as %d effects", d.Effects())
	}
}

// TestDemoListIsBounded: the demo forgets all but the last DemoKeeps
// resources, and lists them a page at a time.
func TestDemoListIsBounded(t *testing.T) {
	e := newEngine(t, nil)
	d := NewDemo(e.Policy())
	var first, last string
	for i := range DemoKeeps + 5 {
		w := do(d, call{body: strconv.Itoa(i)})
		switch i {
		case 0:
			first = w.Body.String()
		case DemoKeeps + 4:
			last = w.Body.String()
		}
	}
	type page struct {
		Items []json.RawMessage `json:"items"`
		Total int               `json:"total"`
	}
	list := func(query string) (int, page) {
		t.Helper()
		w := do(d, call{method: "GET", path: "/orders" + query})
		var p page
		if w.Code == http.StatusOK {
			if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
		}
		return w.Code, p
	}
	if code, p := list(""); code != 200 || p.Total != DemoKeeps || len(p.Items) != 100 || strings.Contains(string(p.Items[0]), `"request":0}`) {
		t.Errorf("first page: %d, total %d, %d items, first %s; want 100 of %d, the oldest forgotten", code, p.Total, len(p.Items), p.Items[0], DemoKeeps)
	}
	if code, p := list("?offset=" + strconv.Itoa(DemoKeeps-1) + "&limit=1000"); code != 200 || len(p.Items) != 1 || string(p.Items[0]) != last {
		t.Errorf("last page: %d, %d items; want the newest resource alone", code, len(p.Items))
	}
	if code, p := list("?offset=9223372036854775807"); code != 200 || len(p.Items) != 0 {
		t.Errorf("offset past the end: %d, %d items", code, len(p.Items))
	}
	for _, bad := range []string{"?limit=0", "?limit=1001", "?offset=-1", "?limit=x"} {
		if code, _ := list(bad); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
	var res struct{ ID string }
	if err := json.Unmarshal([]byte(first), &res); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, do(d, call{method: "GET", path: "/orders/" + res.ID}), http.StatusNotFound, "not_found")
}

func TestDemoDelay(t *testing.T) {
	e := newEngine(t, nil)
	d := NewDemo(e.Policy())
	d.Delay = 50 * time.Millisecond
	start := time.Now()
	if w := do(d, call{body: "{}"}); w.Code != 201 || time.Since(start) < d.Delay {
		t.Errorf("create with a delay: %d after %v", w.Code, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	d.ServeHTTP(w, call{body: "{}"}.request().WithContext(ctx))
	wantProblem(t, w, http.StatusServiceUnavailable, "shutting_down")
}

// marshalCreated is createdJSON as json.Marshal makes it.
func marshalCreated(id, opKey string, body []byte) []byte {
	var echoed any
	switch {
	case len(body) == 0:
	case json.Valid(body):
		echoed = json.RawMessage(body)
	default:
		echoed = string(body)
	}
	res, err := json.Marshal(struct {
		ID        string `json:"id"`
		Operation string `json:"operation"`
		Request   any    `json:"request"`
	}{id, opKey, echoed})
	if err != nil {
		panic(err)
	}
	return res
}

// FuzzCreatedJSON: the demo's answer is byte for byte what json.Marshal
// makes of it, whatever the body.
func FuzzCreatedJSON(f *testing.F) {
	for _, body := range []string{"", `{"a": [1, 2.50, "x"]}`, " \t{ \"<b>&</b>\" : \"\u2028\u2029\" } ", `"just a string"`, "not JSON <&>", "{\"a\":", "\xff\xfe", `{"a":"\ud800"}`, "null", "  ",
		"\ufeff{}", `{"a": 1, "a": 2}`, `[1e400]`, `{"a\"\\": " x \\\" y "}`, strings.Repeat("[", 1001) + strings.Repeat("]", 1001)} {
		f.Add("ID26CHARACTERSOFBASE32TEXT", "orders.create", []byte(body))
	}
	f.Add("<id>", "op\"&\u2028", []byte(`[]`))
	f.Fuzz(func(t *testing.T, id, opKey string, body []byte) {
		if got, want := createdJSON(id, opKey, body), marshalCreated(id, opKey, body); !bytes.Equal(got, want) {
			t.Errorf("createdJSON(%q, %q, %q) =\n%s\nwant\n%s", id, opKey, body, got, want)
		}
	})
}
