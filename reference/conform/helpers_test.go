package conform

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	return probeTargetWith(t, cfg, nil)
}

// probeTargetWith is probeTarget with a gate that follows the run (nil:
// none).
func probeTargetWith(t testing.TB, cfg Config, gate *burstGate) *Report {
	t.Helper()
	if cfg.Policy == nil {
		cfg.Policy = engine(t, nil).Policy()
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out Writer
	if gate != nil {
		out = gate
	}
	rep, err := r.Run(context.Background(), out)
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

// burstGate makes CF07's burst overlap the attempt it repeats, however the
// requests are scheduled: while CF07 runs, the request that created a
// key's record waits in Create until a duplicate found that record
// processing. The other probes send a key's requests one after another,
// so a duplicate never comes while the first is unanswered: the gate is
// armed during CF07 only. It is the run's Writer, and so knows which
// probe runs: the one after those with a result.
type burstGate struct {
	nopWriter
	results int // written so far: Probes()[results] runs
	armed   atomic.Bool

	mu   sync.Mutex
	seen map[string]chan struct{} // by record id, closed when a duplicate found it processing
}

func (g *burstGate) Begin(*Plan) error {
	g.arm()
	return nil
}

func (g *burstGate) Probe(*Result) error {
	g.results++
	g.arm()
	return nil
}

func (g *burstGate) arm() {
	probes := Probes()
	g.armed.Store(g.results < len(probes) && probes[g.results].ID == "CF07")
}

// seenChan returns the channel closed once a duplicate found id's record
// processing.
func (g *burstGate) seenChan(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen = map[string]chan struct{}{}
	}
	c, ok := g.seen[id]
	if !ok {
		c = make(chan struct{})
		g.seen[id] = c
	}
	return c
}

// created holds the request that created id's record, while the gate is
// armed, until a duplicate found the record processing or ctx ends.
func (g *burstGate) created(ctx context.Context, id string) {
	if !g.armed.Load() {
		return
	}
	select {
	case <-g.seenChan(id):
	case <-ctx.Done():
	}
}

// foundProcessing releases the request that created id's record.
func (g *burstGate) foundProcessing(id string) {
	c := g.seenChan(id)
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// gatedStore is a MemoryStore whose attempts wait for their duplicates
// while its gate is armed.
type gatedStore struct {
	*reference.MemoryStore
	gate *burstGate
}

func (s gatedStore) Get(ctx context.Context, id string) (reference.Record, bool, error) {
	rec, found, err := s.MemoryStore.Get(ctx, id)
	if found && rec.State == reference.Processing {
		s.gate.foundProcessing(id)
	}
	return rec, found, err
}

func (s gatedStore) Create(ctx context.Context, id string, rec reference.Record, lease time.Duration) (reference.Record, bool, error) {
	live, created, err := s.MemoryStore.Create(ctx, id, rec, lease)
	switch {
	case created:
		s.gate.created(ctx, id)
	case err == nil && live.State == reference.Processing:
		s.gate.foundProcessing(id)
	}
	return live, created, err
}
