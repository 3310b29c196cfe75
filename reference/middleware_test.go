package reference

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMissingOrMalformedKey(t *testing.T) {
	e := newEngine(t, nil)
	a := &app{}
	h := e.Middleware(a)
	tests := []struct {
		name   string
		values []string
		detail string
	}{
		{"absent", nil, "this request requires an idempotency key in the x-idempotency-key header"},
		{"empty", []string{""}, "this request requires an idempotency key in the x-idempotency-key header"},
		{"repeated", []string{"a", "b"}, "send exactly one x-idempotency-key header, holding one key: a comma in a bare key is two header fields merged (RFC 9110, 5.3)"},
		{"merged by a proxy", []string{"a-1, b-2"}, "send exactly one x-idempotency-key header, holding one key: a comma in a bare key is two header fields merged (RFC 9110, 5.3)"},
		{"malformed sf-string", []string{`"abc`}, `the x-idempotency-key header starts with a double quote but is not a Structured Field String (RFC 8941): printable ASCII between quotes, with only \" and \\ escaped`},
		{"too long", []string{strings.Repeat("k", 65)}, "the idempotency key is longer than 64 characters"},
		{"pattern", []string{"not_allowed"}, "the idempotency key does not match the pattern ^[A-Za-z0-9-]+$"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(h, call{body: `{}`, header: http.Header{"X-Idempotency-Key": tt.values}})
			want := Problem{Type: "about:blank", Title: "Bad Request", Status: 400, Detail: tt.detail, ErrorCode: "idempotency_key_required"}
			if diff := cmp.Diff(want, problemOf(t, w)); diff != "" || w.Code != 400 {
				t.Errorf("status %d, problem (-want +got):\n%s", w.Code, diff)
			}
			if got := w.Header().Get("X-Idempotency-Key"); got != "" {
				t.Errorf("an invalid key was echoed: %q", got)
			}
		})
	}
	if a.runs.Load() != 0 {
		t.Errorf("the handler ran %d times for requests without a valid key", a.runs.Load())
	}
}

// TestReplayIsByteForByte: the replay has the stored status, the headers
// that describe the result, and the body byte for byte, whatever it holds.
func TestReplayIsByteForByte(t *testing.T) {
	e := newEngine(t, nil)
	body := []byte("{\"id\": 7}  \n\x00\xff\xfe trailing bytes\r\n")
	a := &app{serve: func(w http.ResponseWriter, _ *http.Request, run int64) {
		h := w.Header()
		h.Set("Content-Type", "application/vnd.orders+json; charset=utf-8")
		h.Set("Location", "/orders/7")
		h.Set("X-Request-Id", "req-1")
		h.Set("Set-Cookie", "s=1")
		w.WriteHeader(http.StatusAccepted)
		w.Write(body[:5])
		w.Write(body[5:])
	}}
	h := e.Middleware(a)
	c := call{key: "byte-key", body: `{"qty": 2}`}

	first := do(h, c)
	if first.Code != 202 || !bytes.Equal(first.Body.Bytes(), body) || first.Header().Get("X-Request-Id") != "req-1" {
		t.Fatalf("first response %d %q %v: want the handler's own", first.Code, first.Body, first.Header())
	}
	if first.Header().Get("Idempotent-Replayed") != "" {
		t.Error("the first response is marked replayed")
	}

	replay := do(h, c)
	if replay.Code != 202 || !bytes.Equal(replay.Body.Bytes(), body) {
		t.Errorf("replay %d %q, want 202 %q", replay.Code, replay.Body, body)
	}
	want := http.Header{
		"Content-Type":        {"application/vnd.orders+json; charset=utf-8"},
		"Location":            {"/orders/7"},
		"X-Idempotency-Key":   {"byte-key"},
		"Idempotent-Replayed": {"true"},
	}
	if diff := cmp.Diff(want, replay.Header()); diff != "" {
		t.Errorf("replay headers (-want +got):\n%s", diff)
	}
	if a.runs.Load() != 1 {
		t.Errorf("handler ran %d times, want 1", a.runs.Load())
	}
}

func TestReplayOfReserialisedPayload(t *testing.T) {
	e := newEngine(t, nil)
	a := &app{}
	h := e.Middleware(a)
	first := do(h, call{key: "k", body: `{"customer":"C1","items":[{"qty":1,"sku":"P1"}]}`})
	replay := do(h, call{key: "k", body: "{ \"items\" : [ {\"sku\":\"P\\u0031\", \"qty\":1.0} ],\n \"customer\":\"C1\" }"})
	if replay.Code != 201 || replay.Body.String() != first.Body.String() || a.runs.Load() != 1 {
		t.Errorf("re-serialised payload: %d %s, %d runs; want a replay", replay.Code, replay.Body, a.runs.Load())
	}
}

func TestQuotedKeyIsTheSameKey(t *testing.T) {
	e := newEngine(t, nil)
	a := &app{}
	h := e.Middleware(a)
	first := do(h, call{key: "8e03978e-40d5", body: `{}`})
	quoted := do(h, call{key: `"8e03978e-40d5"`, body: `{}`})
	if quoted.Body.String() != first.Body.String() || quoted.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("quoted key: %s, want a replay of %s", quoted.Body, first.Body)
	}
	if got := quoted.Header().Get("X-Idempotency-Key"); got != `"8e03978e-40d5"` {
		t.Errorf("echoed key %q, want the value as sent", got)
	}
}

func TestPayloadMismatch(t *testing.T) {
	tests := []struct{ name, first, second string }{
		{"other value", `{"qty":1}`, `{"qty":2}`},
		{"string is not number", `{"amount":100}`, `{"amount":"100"}`},
		{"integers beyond 2^53", `{"amount":9007199254740993}`, `{"amount":9007199254740992}`},
		{"empty body is not {}", ``, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, nil)
			a := &app{}
			h := e.Middleware(a)
			if w := do(h, call{key: "k", body: tt.first}); w.Code != 201 {
				t.Fatalf("first: %d", w.Code)
			}
			w := do(h, call{key: "k", body: tt.second})
			wantProblem(t, w, 422, "idempotency_key_reused")
			if a.runs.Load() != 1 {
				t.Errorf("handler ran %d times, want 1", a.runs.Load())
			}
		})
	}
}

func TestMismatchWhileRunning(t *testing.T) {
	e := newEngine(t, nil)
	a := &app{release: make(chan struct{}), started: make(chan struct{}, 1)}
	h := e.Middleware(a)
	done := make(chan struct{})
	go func() { do(h, call{key: "k", body: `{"qty":1}`}); close(done) }()
	<-a.started
	wantProblem(t, do(h, call{key: "k", body: `{"qty":2}`}), 422, "idempotency_key_reused")
	close(a.release)
	<-done
}

func TestPayloadNotCanonicalizable(t *testing.T) {
	e := newEngine(t, nil)
	a := &app{}
	h := e.Middleware(a)
	for _, body := range []string{`{"a":1,"a":2}`, `{"a":"\ud800"}`, `{"a":`, `{"a":1e999}`, "not json"} {
		w := do(h, call{key: "k", body: body})
		wantProblem(t, w, 400, CodeNotCanonicalizable)
		if !strings.Contains(w.Body.String(), `"detail":"the request cannot be fingerprinted: body: jcs: `) {
			t.Errorf("%s: detail does not say why: %s", body, w.Body)
		}
	}
	if a.runs.Load() != 0 {
		t.Errorf("handler ran %d times", a.runs.Load())
	}
}

func TestBodyTooLarge(t *testing.T) {
	e := newEngine(t, nil, WithMaxBodyBytes(16))
	a := &app{}
	h := e.Middleware(a)
	wantProblem(t, do(h, call{key: "k", body: `{"a":"0123456789"}`}), 413, CodePayloadTooLarge)
	if w := do(h, call{key: "k2", body: `{"a":"01234567"}`}); w.Code != 201 {
		t.Errorf("a body of exactly the limit: %d", w.Code)
	}
}

// TestScopeIsolation: tenant, actor and operation are part of the
// identity, so the same key and payload under another one executes anew.
func TestScopeIsolation(t *testing.T) {
	e := newEngine(t, nil)
	a := &app{}
	h := e.Middleware(a)
	base := call{key: "k", body: `{}`, header: http.Header{"X-Tenant-Id": {"t1"}, "X-Actor-Id": {"u1"}}}
	first := do(h, base)
	variants := map[string]call{
		"tenant":    {key: "k", body: `{}`, header: http.Header{"X-Tenant-Id": {"t2"}, "X-Actor-Id": {"u1"}}},
		"actor":     {key: "k", body: `{}`, header: http.Header{"X-Tenant-Id": {"t1"}, "X-Actor-Id": {"u2"}}},
		"operation": {method: "POST", path: "/orders/1/cancel", key: "k", body: `{}`, header: base.header},
	}
	for name, c := range variants {
		if w := do(h, c); w.Code != 201 || w.Body.String() == first.Body.String() || w.Header().Get("Idempotent-Replayed") != "" {
			t.Errorf("another %s: %d %s; want its own execution", name, w.Code, w.Body)
		}
	}
	if got := a.runs.Load(); got != 4 {
		t.Errorf("handler ran %d times, want 4", got)
	}
}

// TestBypass: requests outside the policy's idempotency reach the handler
// untouched, every time.
func TestBypass(t *testing.T) {
	e := newEngine(t, nil)
	a := &app{serve: func(w http.ResponseWriter, r *http.Request, _ int64) { w.WriteHeader(299) }}
	h := e.Middleware(a)
	for _, c := range []call{
		{method: "GET", path: "/orders/1"},              // read-only, no key
		{method: "GET", path: "/orders/1", key: "k"},    // read-only with a key: never deduplicated
		{method: "GET", path: "/orders/1", key: "k"},    //
		{method: "GET", path: "/orders/1", key: `"bad`}, // its key is not even parsed
		{method: "POST", path: "/elsewhere"},            // no declared operation
		{method: "DELETE", path: "/orders"},             // wrong method
	} {
		w := do(h, c)
		if w.Code != 299 || w.Header().Get("X-Idempotency-Key") != "" {
			t.Errorf("%s %s: %d, echoed %q; want the handler's answer untouched", c.method, c.path, w.Code, w.Header().Get("X-Idempotency-Key"))
		}
	}
	if got := a.runs.Load(); got != 6 {
		t.Errorf("handler ran %d times, want 6", got)
	}
}

// TestOptionalKey: a state-changing operation outside require_key is
// deduplicated when the client sends a key anyway.
func TestOptionalKey(t *testing.T) {
	e := newEngine(t, map[string]any{"/http_idempotency/require_key": map[string]any{"operations": []any{"orders.create"}}})
	a := &app{}
	h := e.Middleware(a)
	cancel := call{method: "POST", path: "/orders/9/cancel", body: `{}`}
	do(h, cancel)
	do(h, cancel)
	if got := a.runs.Load(); got != 2 {
		t.Fatalf("without a key: %d runs, want 2", got)
	}
	cancel.key = "k"
	first, second := do(h, cancel), do(h, cancel)
	if got := a.runs.Load(); got != 3 || second.Body.String() != first.Body.String() {
		t.Errorf("with a key: %d runs, bodies %s and %s; want one more run and a replay", got, first.Body, second.Body)
	}
	cancel.key = "bad key"
	wantProblem(t, do(h, cancel), 400, "idempotency_key_required")
	wantProblem(t, do(h, call{body: `{}`}), 400, "idempotency_key_required") // orders.create still requires one
}

func TestEchoKeyHeader(t *testing.T) {
	for _, echo := range []bool{true, false} {
		e := newEngine(t, map[string]any{"/http_idempotency/echo_key_header": echo})
		h := e.Middleware(&app{})
		first, replay := do(h, call{key: "k", body: `{}`}), do(h, call{key: "k", body: `{}`})
		want := ""
		if echo {
			want = "k"
		}
		if first.Header().Get("X-Idempotency-Key") != want || replay.Header().Get("X-Idempotency-Key") != want {
			t.Errorf("echo_key_header %v: first echoes %q, replay %q; want %q", echo, first.Header().Get("X-Idempotency-Key"), replay.Header().Get("X-Idempotency-Key"), want)
		}
	}
}

// TestFailures covers a panic and a 5xx answer under both on_failed
// policies, and shows that 4xx answers complete the attempt.
func TestFailures(t *testing.T) {
	failures := map[string]func(w http.ResponseWriter){
		"panic": func(http.ResponseWriter) { panic("out of stock table") },
		"5xx": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("upstream down"))
		},
	}
	for name, fail := range failures {
		for _, onFailed := range []string{"stored_response", "reexecute"} {
			t.Run(name+"/"+onFailed, func(t *testing.T) {
				var logs bytes.Buffer
				e := newEngine(t, map[string]any{"/idempotency_replay/on_failed": onFailed}, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
				a := &app{}
				a.serve = func(w http.ResponseWriter, r *http.Request, run int64) {
					if run == 1 {
						fail(w)
						return
					}
					w.WriteHeader(http.StatusCreated)
					w.Write([]byte("created"))
				}
				h := e.Middleware(a)
				first := do(h, call{key: "k", body: `{}`})
				if first.Code < 500 {
					t.Fatalf("first: %d, want the failure", first.Code)
				}
				if name == "panic" {
					wantProblem(t, first, 500, CodeHandlerPanic)
					if !strings.Contains(logs.String(), "handler panic") || !strings.Contains(logs.String(), "out of stock table") {
						t.Errorf("the panic was not logged: %s", logs.String())
					}
				}
				second := do(h, call{key: "k", body: `{}`})
				third := do(h, call{key: "k", body: `{}`})
				switch onFailed {
				case "stored_response":
					if second.Code != first.Code || second.Body.String() != first.Body.String() || second.Header().Get("Idempotent-Replayed") != "true" {
						t.Errorf("duplicate: %d %s, want a replay of the failure %d %s", second.Code, second.Body, first.Code, first.Body)
					}
					if got := a.runs.Load(); got != 1 {
						t.Errorf("handler ran %d times, want 1", got)
					}
				case "reexecute":
					if second.Code != 201 || second.Header().Get("Idempotent-Replayed") != "" {
						t.Errorf("duplicate: %d, want a new execution answering 201", second.Code)
					}
					if third.Code != 201 || third.Body.String() != "created" || third.Header().Get("Idempotent-Replayed") != "true" {
						t.Errorf("third: %d %s, want a replay of the re-execution", third.Code, third.Body)
					}
					if got := a.runs.Load(); got != 2 {
						t.Errorf("handler ran %d times, want 2", got)
					}
				}
			})
		}
	}
}

func TestClientErrorsComplete(t *testing.T) {
	e := newEngine(t, map[string]any{"/idempotency_replay/on_failed": "reexecute"})
	a := &app{serve: func(w http.ResponseWriter, _ *http.Request, _ int64) { w.WriteHeader(http.StatusConflict) }}
	h := e.Middleware(a)
	do(h, call{key: "k", body: `{}`})
	if w := do(h, call{key: "k", body: `{}`}); w.Code != 409 || w.Header().Get("Idempotent-Replayed") != "true" || a.runs.Load() != 1 {
		t.Errorf("duplicate of a 409: %d, %d runs; want a replay", w.Code, a.runs.Load())
	}
}

// TestAbortHandler: http.ErrAbortHandler still aborts the response, and
// the attempt is recorded as failed first.
func TestAbortHandler(t *testing.T) {
	e := newEngine(t, nil)
	a := &app{serve: func(http.ResponseWriter, *http.Request, int64) { panic(http.ErrAbortHandler) }}
	h := e.Middleware(a)
	func() {
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Errorf("recovered %v, want http.ErrAbortHandler", v)
			}
		}()
		do(h, call{key: "k", body: `{}`})
	}()
	wantProblem(t, do(h, call{key: "k", body: `{}`}), 500, CodeHandlerPanic)
	if a.runs.Load() != 1 {
		t.Errorf("handler ran %d times, want 1", a.runs.Load())
	}
}

func TestExpiry(t *testing.T) {
	clock := newFakeClock()
	e := newEngine(t, nil, WithClock(clock.Now))
	a := &app{}
	h := e.Middleware(a)
	first := do(h, call{key: "k", body: `{"v":1}`})

	clock.Advance(24*time.Hour - time.Nanosecond)
	if w := do(h, call{key: "k", body: `{"v":1}`}); w.Body.String() != first.Body.String() {
		t.Errorf("just before the ttl: %s, want a replay", w.Body)
	}
	clock.Advance(time.Nanosecond)
	// Expired: the identity starts afresh, even with another payload.
	if w := do(h, call{key: "k", body: `{"v":2}`}); w.Code != 201 || w.Header().Get("Idempotent-Replayed") != "" {
		t.Errorf("after the ttl: %d, replayed %q; want a new execution", w.Code, w.Header().Get("Idempotent-Replayed"))
	}
	if got := a.runs.Load(); got != 2 {
		t.Errorf("handler ran %d times, want 2", got)
	}
}

func TestAccessLog(t *testing.T) {
	var logs bytes.Buffer
	text := slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == "duration" {
			return slog.Attr{} // vary from run to run
		}
		return a
	}})
	e := newEngine(t, nil, WithAccessLog(slog.New(text)))
	h := e.Middleware(&app{})
	do(h, call{key: "k1", body: `{}`})
	do(h, call{key: "k1", body: `{}`})
	do(h, call{key: "bad_key", body: `{}`})
	do(h, call{method: "GET", path: "/orders/1"})
	do(h, call{method: "GET", path: "/elsewhere"})
	want := `level=INFO msg=request method=POST path=/orders status=201 operation=orders.create idempotency_key=k1 outcome=executed replayed=false
level=INFO msg=request method=POST path=/orders status=201 operation=orders.create idempotency_key=k1 outcome=replayed replayed=true
level=INFO msg=request method=POST path=/orders status=400 operation=orders.create idempotency_key=bad_key outcome=refused replayed=false
level=INFO msg=request method=GET path=/orders/1 status=201 operation=orders.get idempotency_key="" outcome=bypassed replayed=false
level=INFO msg=request method=GET path=/elsewhere status=201 operation="" idempotency_key="" outcome=bypassed replayed=false
`
	if diff := cmp.Diff(want, logs.String()); diff != "" {
		t.Errorf("access log (-want +got):\n%s", diff)
	}
}

func TestMiddlewareKeepsRequestBody(t *testing.T) {
	e := newEngine(t, nil)
	var got []byte
	a := &app{serve: func(w http.ResponseWriter, r *http.Request, _ int64) { got, _ = io.ReadAll(r.Body) }}
	req := httptest.NewRequest("POST", "/orders", strings.NewReader(`{"k": [1, 2]}`))
	req.Header.Set("X-Idempotency-Key", "k")
	e.Middleware(a).ServeHTTP(httptest.NewRecorder(), req)
	if string(got) != `{"k": [1, 2]}` {
		t.Errorf("the handler read %q, want the body as sent", got)
	}
}

// erringBody fails the read of a request body.
type erringBody struct{}

func (erringBody) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestUnreadableBody(t *testing.T) {
	e := newEngine(t, nil)
	a := &app{}
	r := httptest.NewRequest("POST", "/orders", erringBody{})
	r.Header.Set("X-Idempotency-Key", "k")
	w := httptest.NewRecorder()
	e.Middleware(a).ServeHTTP(w, r)
	wantProblem(t, w, 400, CodeBodyUnreadable)
	if a.runs.Load() != 0 {
		t.Error("the handler ran without the body")
	}
}

// deadlineRecorder is a recorder that supports write deadlines, as a
// real connection does.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadline time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadline = t
	return nil
}

// TestAccessLogKeepsWriterFeatures: behind the access log a bypassed
// handler still reaches what the real writer supports, directly
// (http.Flusher) or through http.ResponseController.
func TestAccessLogKeepsWriterFeatures(t *testing.T) {
	e := newEngine(t, nil, WithAccessLog(quietLogger))
	deadline := time.Unix(1e9, 0)
	var err error
	h := e.Middleware(&app{serve: func(w http.ResponseWriter, _ *http.Request, _ int64) {
		w.(http.Flusher).Flush()
		err = http.NewResponseController(w).SetWriteDeadline(deadline)
	}})
	w := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, call{method: "GET", path: "/orders/1"}.request())
	if !w.Flushed {
		t.Error("Flush did not reach the writer")
	}
	if err != nil || !w.deadline.Equal(deadline) {
		t.Errorf("SetWriteDeadline = %v, deadline %v; want it to reach the writer", err, w.deadline)
	}
}

// languageAdder adds to Content-Language as it writes the header, as a
// middleware outside the engine might.
type languageAdder struct {
	http.ResponseWriter
	value string
}

func (l *languageAdder) WriteHeader(status int) {
	l.Header().Add("Content-Language", l.value)
	l.ResponseWriter.WriteHeader(status)
}

// TestReplayHeadersAreNotWrittenThrough replays a stored header with room
// to grow to two writers that each add to it: each must keep its own
// value, not the one the next replay added.
func TestReplayHeadersAreNotWrittenThrough(t *testing.T) {
	e := newEngine(t, nil)
	h := e.Middleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for _, v := range []string{"en", "de", "fr"} { // length 3, capacity 4
			w.Header().Add("Content-Language", v)
		}
		w.WriteHeader(http.StatusCreated)
	}))
	req := call{body: `{}`, key: "k-language"}
	do(h, req)
	replays := make([]*httptest.ResponseRecorder, 2)
	for i, added := range []string{"it", "nl"} {
		replays[i] = httptest.NewRecorder()
		h.ServeHTTP(&languageAdder{ResponseWriter: replays[i], value: added}, req.request())
	}
	for i, added := range []string{"it", "nl"} {
		got := replays[i].Header().Values("Content-Language")
		if diff := cmp.Diff([]string{"en", "de", "fr", added}, got); diff != "" {
			t.Errorf("replay %d: Content-Language (-want +got):\n%s", i+1, diff)
		}
	}
}
