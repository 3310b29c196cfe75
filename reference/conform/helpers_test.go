package conform

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/idemlint/idemlint/reference"
)

// ordersPolicy is the policy of most tests: two state-changing operations
// and a read-only one, so that no probe is skipped.
const ordersPolicy = "testdata/orders.json"

var quiet = reference.WithLogger(slog.New(slog.DiscardHandler))

// engine builds the engine of testdata/orders.json after edit changes the
// decoded document (nil: none).
func engine(t testing.TB, edit func(doc map[string]any), opts ...reference.Option) *reference.Engine {
	t.Helper()
	src, err := os.ReadFile(ordersPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		var doc map[string]any
		if err := json.Unmarshal(src, &doc); err != nil {
			t.Fatal(err)
		}
		edit(doc)
		if src, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
	}
	e, err := reference.New(ordersPolicy, src, append([]reference.Option{quiet}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// section returns the object member name of doc, for edits.
func section(doc map[string]any, name string) map[string]any { return doc[name].(map[string]any) }

// serveEngine serves e in front of a Demo, wrapped by wrap (nil: none),
// until the test ends, and returns the base URL.
func serveEngine(t testing.TB, e *reference.Engine, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	h := e.Middleware(reference.NewDemo(e.Policy()))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// probeTarget runs every probe of cfg (whose Policy defaults to that of
// testdata/orders.json) and checks the run kept its request bound.
func probeTarget(t testing.TB, cfg Config) *Report {
	t.Helper()
	if cfg.Policy == nil {
		cfg.Policy = engine(t, nil).Policy()
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests > rep.Bounds.MaxRequests {
		t.Errorf("%d requests, above the announced bound of %d", rep.Requests, rep.Bounds.MaxRequests)
	}
	return rep
}

// ids returns the ids of the probes that ended with s.
func ids(rep *Report, s Status) []string {
	var out []string
	for _, r := range rep.Results {
		if r.Status == s {
			out = append(out, r.ID)
		}
	}
	return out
}

// result returns the result of probe id.
func result(t testing.TB, rep *Report, id string) Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no result for %s", id)
	return Result{}
}

// describe lists every failure of a report, for test messages.
func describe(rep *Report) string {
	var s string
	for _, r := range rep.Results {
		if r.Status == Fail {
			s += "\n" + r.ID + ": expected " + r.Expected + "; got " + r.Got
			if r.Diff != "" {
				s += "\n" + r.Diff
			}
		}
	}
	return s
}
