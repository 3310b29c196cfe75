package conform

import (
	"bytes"
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/reference"
)

// A redirect is the answer observed, never followed: the host it points
// to sees no request.
func TestNeverFollowsRedirects(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer target.Close()

	rep := probeTarget(t, Config{Targets: []string{target.URL}})
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other host got %d requests", n)
	}
	if got := result(t, rep, "CF02").Got; !strings.HasPrefix(got, "307 Temporary Redirect") {
		t.Errorf("CF02 got %q, want the 307", got)
	}
}

// A body beyond MaxResponseBytes fails the probe; it is not read whole.
func TestResponseBodyBound(t *testing.T) {
	huge := bytes.Repeat([]byte("a"), 2*MaxResponseBytes)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		w.Write(huge)
	}))
	defer srv.Close()

	rep := probeTarget(t, Config{Targets: []string{srv.URL}})
	if got, want := result(t, rep, "CF02").Got, "201 answer with a body over 1048576 bytes"; got != want {
		t.Errorf("CF02 got %q, want %q", got, want)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(reference.NewDemo(engine(t, nil).Policy()))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	defer srv.Close()

	// The pre-flight check refuses a target whose certificate fails.
	r, err := New(Config{Policy: engine(t, nil).Policy(), Targets: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), nil); !strings.Contains(errText(err), "does not answer: no answer: tls: failed to verify certificate") {
		t.Errorf("against a self-signed certificate Run = %v, want a certificate error", err)
	}
	insecure := probeTarget(t, Config{Targets: []string{srv.URL}, Insecure: true})
	if got := result(t, insecure, "CF02"); got.Status != Pass {
		t.Errorf("with Insecure CF02 %s: %s", got.Status, got.Got)
	}
}

// An effects counter that cannot be read fails each probe that counts,
// and only those.
func TestUnreadableEffectsCounter(t *testing.T) {
	base := serveEngine(t, engine(t, nil), nil)
	for _, tt := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"missing", 404, "", "effects counter: answered 404, want 200"},
		{"another shape", 200, `{"total": 3}`, `effects counter: answered {"total": 3}, want {"count": N}`},
		{"not an integer", 200, `{"count": 1.5}`, `effects counter: answered {"count": 1.5}, want {"count": N}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			counter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer counter.Close()
			rep := probeTarget(t, Config{Targets: []string{base}, EffectsURL: counter.URL})
			// CF04 and CF16 too: they check the answers of CF02 and
			// CF03, which sent nothing.
			want := []string{"CF01", "CF02", "CF03", "CF04", "CF05", "CF06", "CF07", "CF08", "CF10", "CF12", "CF13", "CF15", "CF16", "CF17"}
			if diff := cmp.Diff(want, ids(rep, Fail)); diff != "" {
				t.Fatalf("failing probes (-want +got):\n%s", diff)
			}
			if got := result(t, rep, "CF02").Got; got != tt.want {
				t.Errorf("CF02 got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseHeader(t *testing.T) {
	for _, tt := range []struct {
		text    string
		want    Header
		wantErr string
	}{
		{"Authorization: Bearer abc", Header{"Authorization", "Bearer abc"}, ""},
		{"X-Api-Key:abc:def ", Header{"X-Api-Key", "abc:def"}, ""},
		{"Authorization Bearer abc", Header{}, `--header: want "Name: value"`},
		{"Bad Name: abc", Header{}, `--header: "Bad Name" is not a header name (RFC 9110 token)`},
		{": abc", Header{}, `--header: "" is not a header name (RFC 9110 token)`},
		{"X-Key: a\nb", Header{}, "--header: the value of X-Key holds a line break or NUL"},
	} {
		got, err := ParseHeader(tt.text, "--header")
		if gotErr := errText(err); got != tt.want || gotErr != tt.wantErr {
			t.Errorf("ParseHeader(%q) = %v, %q; want %v, %q", tt.text, got, gotErr, tt.want, tt.wantErr)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A target or effects URL that does not answer at all is refused before
// any probe, with the reason, instead of failing every probe after its
// timeout.
func TestPreflight(t *testing.T) {
	var probed atomic.Int64
	hang := handlerTarget(func(w http.ResponseWriter, r *http.Request) {
		probed.Add(1)
		<-r.Context().Done()
	})
	reset := handlerTarget(func(w http.ResponseWriter, r *http.Request) {
		probed.Add(1)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		conn.(*net.TCPConn).SetLinger(0) // close with RST
		conn.Close()
	})
	closed := func(t *testing.T) (string, bool) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		return "http://" + ln.Addr().String(), false
	}
	good := serveEngine(t, engine(t, nil), nil)
	// The timeout is short only where nothing must answer in it: the
	// answers that must come get the default on loaded cores.
	for _, tt := range []struct {
		name    string
		target  func(t *testing.T) (string, bool)
		effects bool // the broken address is the effects URL
		timeout time.Duration
		want    string
	}{
		{"nothing listens", closed, false, 0, `^the target http://127\.0\.0\.1:\d+ does not answer: no answer: dial tcp 127\.0\.0\.1:\d+: connect: connection refused$`},
		{"not HTTP", notHTTP, false, 0, `^the target http://127\.0\.0\.1:\d+ does not answer: no answer: .*malformed HTTP response "SSH-2.0-OpenSSH_9.6"$`},
		{"resets", reset, false, 0, `^the target http://127\.0\.0\.1:\d+ does not answer: no answer: read tcp .*: connection reset by peer$`},
		{"hangs", hang, false, 100 * time.Millisecond, `^the target http://127\.0\.0\.1:\d+ does not answer: no answer: no answer within 100ms$`},
		// The good target's answer must come within the timeout too.
		{"effects URL hangs", hang, true, 2 * time.Second, `^the effects URL http://127\.0\.0\.1:\d+/_effects does not answer: no answer: no answer within 2s$`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			broken, _ := tt.target(t)
			cfg := Config{Policy: engine(t, nil).Policy(), Targets: []string{broken}, Timeout: tt.timeout}
			if tt.effects {
				cfg.Targets, cfg.EffectsURL = []string{good}, broken+"/_effects"
			}
			r, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := r.Run(context.Background(), nil)
			if rep != nil || !regexp.MustCompile(tt.want).MatchString(errText(err)) {
				t.Errorf("Run = %v, %q; want no report and %s", rep, errText(err), tt.want)
			}
		})
	}
	if n := probed.Load(); n != 3 { // one pre-flight request each
		t.Errorf("the broken targets got %d requests, want 3", n)
	}
}
