package conform

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/reference"
)

// Each target below is wrong in one way, and exactly the probes that see
// that way must fail (wantFail), the others pass or skip (wantSkip,
// {"CF18", "CF19"} unless given: one target, no origin). The ones built on
// the reference engine serve its Demo's effects counter too, so the
// counter checks run on every probe that has one.
func TestWrongTargets(t *testing.T) {
	t.Parallel()
	racy := &burstGate{}
	for _, tt := range []struct {
		name string
		// base starts the target and returns its base URL and whether it
		// serves an effects counter at /_effects.
		base func(t *testing.T) (string, bool)
		// gate, when set, follows the run for the target's store.
		gate     *burstGate
		timeout  time.Duration
		deadline time.Duration
		wantFail []string
		wantSkip []string
		wantGot  map[string]string // what some failing probes got
		wantHint map[string]string
	}{
		{
			name: "the reference engine itself",
			base: engineTarget(nil, nil),
		},
		{
			// A store without an atomic create-if-absent: duplicates
			// arriving together all find no record and all execute.
			name:     "executes twice under concurrency",
			base:     engineTarget(nil, nil, reference.WithStore(racyStore{gatedStore{reference.NewMemoryStore(reference.MemoryOptions{}), racy}})),
			gate:     racy,
			wantFail: []string{"CF07"},
		},
		{
			name:     "ignores the fingerprint",
			base:     engineTarget(nil, nil, reference.WithStore(blindStore{reference.NewMemoryStore(reference.MemoryOptions{})})),
			wantFail: []string{"CF05", "CF10", "CF11"},
			wantGot: map[string]string{
				"CF05": `201 Created, body {"id":"`,
				"CF10": "a replay of the first answer (same body), so the change went unnoticed; the effects counter grew by 1, 1 expected",
			},
		},
		{
			// The stored body goes through a JSON re-encoder on replay:
			// the same value, but not the same bytes.
			name: "replays another body",
			base: engineTarget(nil, rewrite(func(r *http.Request, status int, h http.Header, body []byte) (int, []byte) {
				if h.Get("Idempotent-Replayed") != "true" {
					return status, body
				}
				var out bytes.Buffer
				if err := json.Indent(&out, body, "", "  "); err != nil {
					panic(err)
				}
				return status, out.Bytes()
			})),
			wantFail: []string{"CF03", "CF06", "CF07", "CF12"},
			wantGot:  map[string]string{"CF03": "the same JSON value spelt otherwise: 201 Created"},
		},
		{
			name: "answers a missing key with 422",
			base: engineTarget(nil, rewrite(func(r *http.Request, status int, h http.Header, body []byte) (int, []byte) {
				if len(r.Header.Values("X-Idempotency-Key")) == 0 && status == http.StatusBadRequest {
					return http.StatusUnprocessableEntity, body
				}
				return status, body
			})),
			// The problem's status member still says 400: CF14 sees that.
			wantFail: []string{"CF01", "CF14"},
			wantGot: map[string]string{
				"CF01": `422 Unprocessable Entity, error_code "idempotency_key_required"`,
				"CF14": "CF01's answer status member 400 for HTTP 422",
			},
		},
		{
			name: "drops the echoed key header",
			base: engineTarget(nil, rewrite(func(r *http.Request, status int, h http.Header, body []byte) (int, []byte) {
				h.Del("X-Idempotency-Key")
				return status, body
			})),
			wantFail: []string{"CF04"},
		},
		{
			// Each execution runs the handler twice and answers with the
			// second run: every body looks right, only the effects
			// counter sees it.
			name: "executes every request twice",
			base: func(t *testing.T) (string, bool) {
				e := engine(t, nil)
				demo := reference.NewDemo(e.Policy())
				twice := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPost {
						body, _ := io.ReadAll(r.Body)
						r.Body = io.NopCloser(bytes.NewReader(body))
						demo.ServeHTTP(httptest.NewRecorder(), r.Clone(r.Context()))
						r.Body = io.NopCloser(bytes.NewReader(body))
					}
					demo.ServeHTTP(w, r)
				})
				srv := httptest.NewServer(e.Middleware(twice))
				t.Cleanup(srv.Close)
				return srv.URL, true
			},
			wantFail: []string{"CF02", "CF05", "CF06", "CF07", "CF08", "CF10", "CF12", "CF13", "CF17"},
			wantGot:  map[string]string{"CF02": "it grew by 2, from 0 to 2"},
		},
		{
			// Every probe request times out; CF07, whose requests may
			// wait 3s, is cut by the run deadline, and the probes after
			// it do not run. The pre-flight GET is answered. The four
			// requests before CF07 take 0.4s: the deadline leaves them
			// 1.6s more on loaded cores, and still falls in CF07's wait.
			name: "hangs",
			base: handlerTarget(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/" {
					return
				}
				// With the body read, the server watches the connection
				// and ends the context when the client gives up.
				io.Copy(io.Discard, r.Body)
				<-r.Context().Done()
			}),
			timeout:  100 * time.Millisecond,
			deadline: 2 * time.Second,
			wantFail: []string{"CF01", "CF02", "CF03", "CF04", "CF05", "CF06", "CF07", "CF08", "CF09", "CF10", "CF11", "CF12", "CF13", "CF14", "CF15", "CF16", "CF17"},
			wantGot: map[string]string{
				"CF01": "no answer: timed out after 100ms",
				"CF07": "no answer x16; no answer: the run deadline of 2s passed",
				"CF13": "not run: the run deadline of 2s passed",
			},
		},
		{
			// 200 with random bytes: the probes that need a refusal, a
			// replay or one body fail; those that need a 2xx that is not
			// a replay, or anything but 400, pass or cannot be judged.
			name: "answers garbage",
			base: handlerTarget(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Write([]byte("<html>\x00\xff" + rand.Text()))
			}),
			wantFail: []string{"CF01", "CF03", "CF04", "CF05", "CF06", "CF07", "CF10", "CF12", "CF15", "CF16"},
			wantSkip: []string{"CF11", "CF13", "CF14", "CF17", "CF18", "CF19"},
		},
		{
			// The refusals are plain JSON, with their code under "code".
			name: "refuses with plain JSON",
			base: engineTarget(nil, rewrite(func(r *http.Request, status int, h http.Header, body []byte) (int, []byte) {
				if status < 400 {
					return status, body
				}
				h.Set("Content-Type", "application/json")
				return status, bytes.Replace(body, []byte(`"error_code"`), []byte(`"code"`), 1)
			})),
			wantFail: []string{"CF01", "CF05", "CF14"},
			wantGot: map[string]string{
				"CF05": "422 Unprocessable Entity, body {",
				"CF14": `CF01's answer Content-Type "application/json", no error_code; CF05's answer Content-Type "application/json", no error_code`,
			},
			wantHint: map[string]string{"CF05": "the body has the code under /code; the spec wants it in a top-level error_code member"},
		},
		{
			name: "accepts keys longer than max_length",
			base: engineTarget(func(doc map[string]any) {
				section(doc, "http_idempotency")["key_format"] = map[string]any{"max_length": 255}
			}, nil),
			wantFail: []string{"CF15"},
		},
		{
			name: "sends no replay marker",
			base: engineTarget(nil, rewrite(func(r *http.Request, status int, h http.Header, body []byte) (int, []byte) {
				h.Del("Idempotent-Replayed")
				return status, body
			})),
			wantFail: []string{"CF16"},
		},
		{
			name:     "shares records across actors",
			base:     engineTarget(nil, setHeader("X-Actor-Id", "everyone")),
			wantFail: []string{"CF17"},
		},
		{
			name:     "shares records across tenants",
			base:     engineTarget(nil, setHeader("X-Tenant-Id", "everyone")),
			wantFail: []string{"CF13"},
		},
		{
			// Every write is filed under orders.create: the same key on
			// orders.cancel is a payload mismatch.
			name: "shares records across operations",
			base: engineTarget(nil, func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPost {
						r.URL.Path = "/orders"
					}
					next.ServeHTTP(w, r)
				})
			}),
			wantFail: []string{"CF08"},
			wantGot:  map[string]string{"CF08": `422 Unprocessable Entity, error_code "idempotency_key_reused"`},
		},
		{
			name: "requires the key on reads",
			base: engineTarget(func(doc map[string]any) {
				section(doc, "http_idempotency")["require_key"] = map[string]any{"methods": []any{"GET", "POST"}}
			}, nil),
			wantFail: []string{"CF09"},
		},
		{
			name: "fingerprints the raw bytes",
			base: engineTarget(func(doc map[string]any) {
				section(doc, "idempotency_fingerprint")["canonicalization"] = "raw_bytes"
			}, nil),
			wantFail: []string{"CF06"},
		},
		{
			// A target that does not parse Structured Field Strings: the
			// quoted key is another key.
			name: "takes the quoted key for another",
			base: engineTarget(nil, func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if k := r.Header.Get("X-Idempotency-Key"); strings.HasPrefix(k, `"`) {
						r.Header.Set("X-Idempotency-Key", strings.Trim(k, `"`)+"-quoted")
					}
					next.ServeHTTP(w, r)
				})
			}),
			wantFail: []string{"CF12"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base, counts := tt.base(t)
			cfg := Config{Targets: []string{base}, Timeout: tt.timeout, MaxDuration: tt.deadline}
			if counts {
				cfg.EffectsURL = base + reference.EffectsPath
			}
			start := time.Now()
			rep := probeTargetWith(t, cfg, tt.gate)
			if diff := cmp.Diff(tt.wantFail, ids(rep, Fail)); diff != "" {
				t.Errorf("failing probes (-want +got):\n%s\nfailures:%s", diff, describe(rep))
			}
			for id, want := range tt.wantGot {
				if got := result(t, rep, id).Got; !strings.Contains(got, want) {
					t.Errorf("%s got %q, want %q in it", id, got, want)
				}
			}
			for id, want := range tt.wantHint {
				if got := result(t, rep, id).Hint; got != want {
					t.Errorf("%s hint %q, want %q", id, got, want)
				}
			}
			wantSkip := tt.wantSkip
			if wantSkip == nil {
				wantSkip = []string{"CF18", "CF19"}
			}
			if diff := cmp.Diff(wantSkip, ids(rep, Skip)); diff != "" {
				t.Errorf("skipped probes (-want +got):\n%s", diff)
			}
			if bound := rep.Bounds.Deadline + time.Second; time.Since(start) > bound {
				t.Errorf("the run took %s, beyond its deadline of %s", time.Since(start), rep.Bounds.Deadline)
			}
		})
	}
}

// setHeader returns a wrapper that sets a request header before the
// handler sees it, as a service that ignores the caller's value does.
func setHeader(name, value string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Set(name, value)
			next.ServeHTTP(w, r)
		})
	}
}

// engineTarget serves the engine of testdata/orders.json after edit (nil:
// none), built with opts, in front of a Demo, wrapped by wrap (nil: none).
// Conform probes it against the unedited policy.
func engineTarget(edit func(doc map[string]any), wrap func(http.Handler) http.Handler, opts ...reference.Option) func(t *testing.T) (string, bool) {
	return func(t *testing.T) (string, bool) {
		return serveEngine(t, engine(t, edit, opts...), wrap), true
	}
}

func handlerTarget(h http.HandlerFunc) func(t *testing.T) (string, bool) {
	return func(t *testing.T) (string, bool) {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL, false
	}
}

// notHTTP accepts connections, answers a request as an SSH server greets
// and hangs up.
func notHTTP(t *testing.T) (string, bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			// Greeting only once the request arrived, so the client is
			// reading when the answer comes.
			http.ReadRequest(bufio.NewReader(conn)) //nolint:errcheck // any request will do
			conn.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
			conn.Close()
		}
	}()
	return "http://" + ln.Addr().String(), false
}

// rewrite returns a wrapper that lets edit change each answer of the
// handler it wraps (its header in place), knowing the request.
func rewrite(edit func(r *http.Request, status int, h http.Header, body []byte) (int, []byte)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			status, body := edit(r, rec.Code, rec.Header(), rec.Body.Bytes())
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(status)
			w.Write(body)
		})
	}
}

// racyStore creates records the way a store without an atomic
// create-if-absent does: a request that finds an attempt still running
// believes it created the record itself, and executes too. Its gate keeps
// the attempt of CF07's burst running until a duplicate found it, so that
// the burst always overlaps it. Requests one after another see nothing
// wrong.
type racyStore struct{ gatedStore }

func (s racyStore) Create(ctx context.Context, id string, rec reference.Record, lease time.Duration) (reference.Record, bool, error) {
	live, created, err := s.gatedStore.Create(ctx, id, rec, lease)
	if !created && err == nil && live.State == reference.Processing && live.Fingerprint == rec.Fingerprint {
		return rec, true, nil
	}
	return live, created, err
}

// blindStore hands every record back with the fingerprint of the request
// that looks it up, as a service that stores no fingerprint behaves: a
// reused key replays whatever payload comes with it.
type blindStore struct{ *reference.MemoryStore }

func (s blindStore) Create(ctx context.Context, id string, rec reference.Record, lease time.Duration) (reference.Record, bool, error) {
	live, created, err := s.MemoryStore.Create(ctx, id, rec, lease)
	live.Fingerprint = rec.Fingerprint
	return live, created, err
}

// Get finds nothing, so that every request reaches Create.
func (blindStore) Get(context.Context, string) (reference.Record, bool, error) {
	return reference.Record{}, false, nil
}

// Get finds nothing, so that every request reaches Create.
func (racyStore) Get(context.Context, string) (reference.Record, bool, error) {
	return reference.Record{}, false, nil
}
