package conform

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const frontEnd = "https://app.orders.example"

// corsProxy answers every OPTIONS request with status and the headers
// cors (nil: passes it to the engine, which knows no CORS), records the
// preflights it sees, and passes every other request to the engine.
type corsProxy struct {
	status int
	cors   http.Header

	mu   sync.Mutex
	seen []http.Header
}

func (p *corsProxy) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		p.mu.Lock()
		p.seen = append(p.seen, r.Header.Clone())
		p.mu.Unlock()
		if p.cors == nil {
			next.ServeHTTP(w, r)
			return
		}
		for name, values := range p.cors {
			w.Header()[name] = values
		}
		w.WriteHeader(p.status)
	})
}

func TestCORSPreflight(t *testing.T) {
	t.Parallel()
	allow := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	const (
		acao = "Access-Control-Allow-Origin"
		acah = "Access-Control-Allow-Headers"
		acac = "Access-Control-Allow-Credentials"
	)
	missingKeyHint := "a browser then refuses to send the key; behind ingress-nginx, check --as-built on the Ingress (IDL405)"
	for _, tt := range []struct {
		name     string
		proxy    *corsProxy
		want     Status
		wantGot  string
		wantHint string
		wantNote string
	}{
		{
			name:  "allows the origin and the key",
			proxy: &corsProxy{status: 204, cors: allow(acao, frontEnd, acah, "Content-Type, X-Idempotency-Key", acac, "true")},
			want:  Pass,
		},
		{
			name:  "wildcards without credentials",
			proxy: &corsProxy{status: 200, cors: allow(acao, "*", acah, "*")},
			want:  Pass,
		},
		{
			name:  "lists the key in another case, in a second field",
			proxy: &corsProxy{status: 204, cors: allow(acao, frontEnd, acah, "content-type", acah, "x-IDEMPOTENCY-key")},
			want:  Pass,
		},
		{
			name:     "lists the key but not content-type",
			proxy:    &corsProxy{status: 204, cors: allow(acao, frontEnd, acah, "X-Idempotency-Key")},
			want:     Pass,
			wantNote: "Access-Control-Allow-Headers does not list content-type: a browser refuses the request all the same",
		},
		{
			// ingress-nginx's default cors-allow-headers, which has no key.
			name:     "leaves the key header out",
			proxy:    &corsProxy{status: 204, cors: allow(acao, frontEnd, acah, "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization", acac, "true")},
			want:     Fail,
			wantGot:  "Access-Control-Allow-Headers: DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, Cache-Control, Content-Type, Range, Authorization, with Access-Control-Allow-Credentials: true",
			wantHint: missingKeyHint,
		},
		{
			name:     "answers * for headers with credentials",
			proxy:    &corsProxy{status: 204, cors: allow(acao, frontEnd, acah, "*", acac, "true")},
			want:     Fail,
			wantGot:  "Access-Control-Allow-Headers: *, with Access-Control-Allow-Credentials: true",
			wantHint: missingKeyHint,
		},
		{
			name:    "answers * for the origin with credentials",
			proxy:   &corsProxy{status: 204, cors: allow(acao, "*", acah, "X-Idempotency-Key", acac, "true")},
			want:    Fail,
			wantGot: "Access-Control-Allow-Origin: *, with Access-Control-Allow-Credentials: true",
		},
		{
			name:    "allows another origin",
			proxy:   &corsProxy{status: 204, cors: allow(acao, "https://admin.orders.example", acah, "X-Idempotency-Key")},
			want:    Fail,
			wantGot: "Access-Control-Allow-Origin: https://admin.orders.example",
		},
		{
			name:    "allows the origin twice",
			proxy:   &corsProxy{status: 204, cors: allow(acao, frontEnd, acao, frontEnd, acah, "X-Idempotency-Key")},
			want:    Fail,
			wantGot: "Access-Control-Allow-Origin: https://app.orders.example, https://app.orders.example",
		},
		{
			name:    "refuses the preflight",
			proxy:   &corsProxy{status: 403, cors: allow(acao, frontEnd, acah, "X-Idempotency-Key")},
			want:    Fail,
			wantGot: "403 Forbidden, empty body",
		},
		{
			name:    "answers 2xx without CORS headers",
			proxy:   &corsProxy{status: 204, cors: http.Header{}},
			want:    Fail,
			wantGot: "no Access-Control-Allow-Origin header",
		},
		{
			// The demo behind the engine routes OPTIONS /orders to nothing.
			name:    "knows no CORS at all",
			proxy:   &corsProxy{},
			want:    Fail,
			wantGot: `404 Not Found, error_code "not_found"`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := engine(t, nil)
			rep := probeTarget(t, Config{
				Policy: e.Policy(), Targets: []string{serveEngine(t, e, tt.proxy.wrap)}, Origin: frontEnd,
				Headers: []Header{{"Authorization", "Bearer secret-token"}},
			})
			res := result(t, rep, "CF19")
			got := Result{Status: res.Status, Got: res.Got, Hint: res.Hint, Note: res.Note, Requests: res.Requests}
			want := Result{Status: tt.want, Got: tt.wantGot, Hint: tt.wantHint, Note: tt.wantNote, Requests: 1}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("CF19 (-want +got):\n%s", diff)
			}
			if failed := ids(rep, Fail); tt.want == Pass && failed != nil || tt.want == Fail && !cmp.Equal(failed, []string{"CF19"}) {
				t.Errorf("failed %v:%s", failed, describe(rep))
			}
			// One preflight, as a browser sends it: no credentials, no
			// key, no scope headers.
			wantSent := []http.Header{{
				"Origin":                         {frontEnd},
				"Access-Control-Request-Method":  {"POST"},
				"Access-Control-Request-Headers": {"x-idempotency-key, content-type"},
			}}
			tt.proxy.mu.Lock()
			sent := tt.proxy.seen
			tt.proxy.mu.Unlock()
			for _, h := range sent {
				for _, transport := range []string{"User-Agent", "Accept-Encoding", "Content-Length"} {
					h.Del(transport)
				}
			}
			if diff := cmp.Diff(wantSent, sent); diff != "" {
				t.Errorf("preflights sent (-want +got):\n%s", diff)
			}
		})
	}
}

// The preflight judges its own requests: one that executes the operation
// grows the effects counter, which must not move.
func TestCORSPreflightExecutesNothing(t *testing.T) {
	t.Parallel()
	e := engine(t, nil)
	base := serveEngine(t, e, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodOptions && r.URL.Path == "/orders" {
				// Routed as the write itself, then answered as a preflight.
				r2 := r.Clone(r.Context())
				r2.Method = http.MethodPost
				r2.Header.Set("X-Idempotency-Key", "preflight-key")
				next.ServeHTTP(discard{http.Header{}}, r2)
				w.Header().Set("Access-Control-Allow-Origin", frontEnd)
				w.Header().Set("Access-Control-Allow-Headers", "Content-Type, X-Idempotency-Key")
				w.WriteHeader(http.StatusNoContent)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	rep := probeTarget(t, Config{Policy: e.Policy(), Targets: []string{base}, EffectsURL: base + "/_effects", Origin: frontEnd})
	res := result(t, rep, "CF19")
	if res.Status != Fail || res.Expected != "the effects counter to grow by 0 (a preflight executes nothing)" || !strings.HasPrefix(res.Got, "it grew by 1, from ") {
		t.Errorf("CF19 %s: expected %q, got %q", res.Status, res.Expected, res.Got)
	}
}

// discard is a ResponseWriter that writes nothing, so the wrapped write's
// answer does not reach the client.
type discard struct{ h http.Header }

func (d discard) Header() http.Header       { return d.h }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

func TestCORSPreflightSkipped(t *testing.T) {
	t.Parallel()
	e := engine(t, nil)
	base := serveEngine(t, e, nil)
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no origin", Config{Policy: e.Policy(), Targets: []string{base}}, "no --origin: give the origin the browser front end is served from to probe its CORS preflight"},
		{"in process", Config{Policy: e.Policy(), Origin: frontEnd}, "the in-process reference engine answers no CORS preflight: probe the browser-facing --target with --origin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cfg.Targets == nil {
				tt.cfg.Handler, tt.cfg.Effects = InProcess(e)
			}
			res := result(t, probeTarget(t, tt.cfg), "CF19")
			if res.Status != Skip || res.Reason != tt.want || res.Requests != 0 {
				t.Errorf("CF19 %s (%d requests): %q, want skipped: %q", res.Status, res.Requests, res.Reason, tt.want)
			}
		})
	}
}

func TestCORSOrigin(t *testing.T) {
	policy := engine(t, nil).Policy()
	for _, ok := range []string{"https://app.example", "http://127.0.0.1:3000", "https://[::1]:8443", "http://localhost"} {
		if _, err := New(Config{Policy: policy, Targets: []string{"http://x"}, Origin: ok}); err != nil {
			t.Errorf("origin %q refused: %v", ok, err)
		}
	}
	const want = "give scheme://host[:port], e.g. https://app.example"
	for origin, msg := range map[string]string{
		"app.example":                 `the origin "app.example" is not an http or https origin: ` + want,
		"ftp://app.example":           `the origin "ftp://app.example" is not an http or https origin: ` + want,
		"https://":                    `the origin "https://" is not an http or https origin: ` + want,
		"https://[::1":                `the origin "https://[::1" is not an http or https origin: ` + want,
		"null":                        `the origin "null" is not an http or https origin: ` + want,
		"https://app.example/":        `the origin "https://app.example/" is not a serialized origin: give https://app.example, as a browser sends it in Origin`,
		"https://app.example/login":   `the origin "https://app.example/login" is not a serialized origin: give https://app.example, as a browser sends it in Origin`,
		"https://app.example?x=1":     `the origin "https://app.example?x=1" is not a serialized origin: give https://app.example, as a browser sends it in Origin`,
		"https://app.example#top":     `the origin "https://app.example#top" is not a serialized origin: give https://app.example, as a browser sends it in Origin`,
		"https://u:p@app.example":     `the origin "https://u:p@app.example" is not a serialized origin: give https://app.example, as a browser sends it in Origin`,
		"https://App.Example":         `the origin "https://App.Example" is not a serialized origin: give https://app.example, as a browser sends it in Origin`,
		"https://app.example:443":     `the origin "https://app.example:443" is not a serialized origin: give https://app.example, as a browser sends it in Origin`,
		"http://app.example:80":       `the origin "http://app.example:80" is not a serialized origin: give http://app.example, as a browser sends it in Origin`,
		"HTTPS://app.example":         `the origin "HTTPS://app.example" is not a serialized origin: give https://app.example, as a browser sends it in Origin`,
		"https://app.example\r\nX: y": `the origin "https://app.example\r\nX: y" is not an http or https origin: ` + want,
	} {
		_, err := New(Config{Policy: policy, Targets: []string{"http://x"}, Origin: origin})
		if got := errText(err); got != msg {
			t.Errorf("origin %q: %q, want %q", origin, got, msg)
		}
	}
}

// A method other than GET, HEAD and POST must be listed too: CF19
// leaves it out of its verdict, so CF19 passes with a note saying so.
func TestCORSPreflightMethod(t *testing.T) {
	t.Parallel()
	put := func(doc map[string]any) {
		doc["operations"].([]any)[0].(map[string]any)["method"] = "PUT"
	}
	for methods, wantNote := range map[string]string{
		"GET, POST":  "Access-Control-Allow-Methods does not list PUT: a browser refuses the request all the same",
		"POST, PUT":  "",
		"*":          "",
		"put, patch": "Access-Control-Allow-Methods does not list PUT: a browser refuses the request all the same",
	} {
		t.Run(methods, func(t *testing.T) {
			t.Parallel()
			e := engine(t, put)
			proxy := &corsProxy{status: 204, cors: http.Header{
				"Access-Control-Allow-Origin":  {frontEnd},
				"Access-Control-Allow-Headers": {"Content-Type, X-Idempotency-Key"},
				"Access-Control-Allow-Methods": {methods},
			}}
			rep := probeTarget(t, Config{Policy: e.Policy(), Targets: []string{serveEngine(t, e, proxy.wrap)}, Origin: frontEnd})
			if res := result(t, rep, "CF19"); res.Status != Pass || res.Note != wantNote {
				t.Errorf("CF19 %s %q, note %q; want a pass, note %q", res.Status, res.Got, res.Note, wantNote)
			}
			proxy.mu.Lock()
			defer proxy.mu.Unlock()
			if len(proxy.seen) != 1 || proxy.seen[0].Get("Access-Control-Request-Method") != "PUT" {
				t.Errorf("preflights sent: %v", proxy.seen)
			}
		})
	}
}
