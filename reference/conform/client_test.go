package conform

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

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

	rep := probeTarget(t, Config{Target: target.URL})
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

	rep := probeTarget(t, Config{Target: srv.URL})
	if got, want := result(t, rep, "CF02").Got, "201 answer with a body over 1048576 bytes"; got != want {
		t.Errorf("CF02 got %q, want %q", got, want)
	}
}

// A service that reflects the request headers into its answers puts the
// extra headers' secret into what conform shows; every output redacts it.
func TestHeadersRedactedEverywhere(t *testing.T) {
	const secret = "Bearer s3cr3t-t0ken"
	var received atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == secret {
			received.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"authorization": r.Header.Get("Authorization"), "key": r.Header.Get("X-Idempotency-Key")})
	}))
	defer srv.Close()

	var verbose strings.Builder
	rep := probeTarget(t, Config{Target: srv.URL, Headers: []Header{{"Authorization", secret}}, Verbose: &verbose})
	if received.Load() != int64(rep.Requests) {
		t.Errorf("%d of %d requests carried the extra header", received.Load(), rep.Requests)
	}
	outputs := map[string]string{"verbose": verbose.String()}
	for _, format := range Formats {
		var stdout, stderr strings.Builder
		w, err := NewWriter(format, &stdout, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		w.Begin(rep.Bounds)
		for i := range rep.Results {
			w.Probe(&rep.Results[i])
		}
		w.End(rep)
		outputs[format] = stdout.String() + stderr.String()
	}
	for name, out := range outputs {
		if strings.Contains(out, "s3cr3t") {
			t.Errorf("the %s output shows the secret:\n%s", name, out)
		}
		if !strings.Contains(out, redacted) {
			t.Errorf("the %s output shows no %s: the test proves nothing", name, redacted)
		}
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(reference.NewDemo(engine(t, nil).Policy()))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	defer srv.Close()

	verified := probeTarget(t, Config{Target: srv.URL})
	if got := result(t, verified, "CF02").Got; !strings.Contains(got, "certificate") {
		t.Errorf("against a self-signed certificate CF02 got %q, want a certificate error", got)
	}
	insecure := probeTarget(t, Config{Target: srv.URL, Insecure: true})
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
			rep := probeTarget(t, Config{Target: base, EffectsURL: counter.URL})
			// CF04 too: it checks the answers of CF02 and CF03, which
			// sent nothing.
			want := []string{"CF01", "CF02", "CF03", "CF04", "CF05", "CF06", "CF07", "CF08", "CF10", "CF12", "CF13"}
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
