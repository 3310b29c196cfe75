package conform

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idemlint/idemlint/reference/jcs"
)

// secret is an extra header value that needs escaping in JSON ("\/" is
// allowed for its slash), in Go quoting and in percent-encoding.
const secret = `Bearer Zq7/vX"k9+Wm%3p\R2 a`

// echoes are the ways a careless target reflects a request header into
// its answer, each a function of the header's value.
var echoes = map[string]func(string) string{
	"whole": func(v string) string { return v },
	"escaped": func(v string) string {
		q := string(jcs.AppendString(nil, v))
		return strings.ReplaceAll(q[1:len(q)-1], "/", `\/`)
	},
	"unicode-escaped": func(v string) string {
		var b strings.Builder
		for _, c := range v {
			fmt.Fprintf(&b, `\u%04X`, c)
		}
		return b.String()
	},
	"percent-encoded": url.QueryEscape,
	"path-escaped":    url.PathEscape,
}

// window is the most of a body any output shows on one line, and more.
const window = Width + len(secret)

// echoServer answers every request with a body that carries the
// Authorization header as echo spells it, after padding that grows by one
// byte with each answer, so that the secret lands at every offset of what
// conform shows of a body. It answers 201, 409 and 500 in turn, for
// replays, refusals and failures; it returns its URL and the number of
// answers so far.
func echoServer(t *testing.T, echo func(string) string) (string, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1))
		auth := echo(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/_effects" {
			w.Write([]byte(`{"count":` + strconv.Itoa(i) + `,"auth":"` + auth + `"}`))
			return
		}
		w.WriteHeader([]int{201, 409, 500}[i%3])
		w.Write([]byte(`{"pad":"` + strings.Repeat("p", i%window) + `","auth":"` + auth + `","key":"` + r.Header.Get("X-Idempotency-Key") + `"}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

// No output shows any 6-character piece of the secret, however the target
// echoes it and wherever the echo falls in the part of a body conform
// shows: every offset of the preview windows (the verbose log shows a
// preview of every answer), in every format.
func TestSecretNeverShown(t *testing.T) {
	t.Parallel()
	for name, echo := range echoes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base, answers := echoServer(t, echo)
			shown := false
			for answers.Load() < 2*int64(window) { // every offset, and each status at many
				var verbose strings.Builder
				rep := probeTarget(t, Config{
					Targets: []string{base}, EffectsURL: base + "/_effects", Concurrency: 2,
					Headers: []Header{{"Authorization", secret}}, Verbose: &verbose,
				})
				outputs := map[string]string{"verbose": verbose.String()}
				for _, format := range Formats {
					stdout, stderr := write(t, format, rep)
					outputs[format] = stdout + stderr
				}
				for out, text := range outputs {
					if piece := secretPiece(text); piece != "" {
						t.Fatalf("the %s output shows %q of the secret:\n%s", out, piece, text)
					}
				}
				shown = shown || strings.Contains(outputs["verbose"], "auth\":\"<redacted>")
			}
			if !shown {
				t.Errorf("the verbose log never showed the redacted echo: the test proves nothing")
			}
		})
	}
}

// secretPiece returns a 6-character substring of the secret that text
// holds, "" when there is none.
func secretPiece(text string) string {
	for i := 0; i+6 <= len(secret); i++ {
		if strings.Contains(text, secret[i:i+6]) {
			return secret[i : i+6]
		}
	}
	return ""
}

func TestRedactor(t *testing.T) {
	red := newRedactor([]string{secret, "ünïcødé-😀-secret"})
	for _, tt := range []struct{ in, want string }{
		{"x" + secret + "y", "x<redacted>y"},
		{`"Bearer Zq7\/vX\"k9+Wm%3p\\R2 a"`, `"<redacted>"`},
		{`Bearer\u0020Zq7\u002FvX\u0022k9\u002bWm%3p\u005cR2 a`, "<redacted>"},
		{"Bearer+Zq7%2FvX%22k9%2BWm%253p%5CR2+a", "<redacted>"},
		{"Bearer%20Zq7%2fvX%22k9%2bWm%253p%5cR2%20a and " + secret, "<redacted> and <redacted>"},
		{`\u00fcn\u00efc\u00f8d\u00e9-\ud83d\ude00-secret`, "<redacted>"},
		{"%C3%BCn%C3%AFc%C3%B8d%C3%A9-%F0%9F%98%80-secret", "<redacted>"},
		{"Bearer Zq7/vX", "Bearer Zq7/vX"},                // a prefix alone is not the secret
		{"Bearer Zq7/vX\"k9+Wm%253p\\R2 a", "<redacted>"}, // "%" as itself or "%25"
		{"Bearer Zq7/vX\"k9+Wm%3p\\R2 a", "<redacted>"},
		{"", ""},
	} {
		if got := red.text(tt.in); got != tt.want {
			t.Errorf("text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestShortSecretRefused(t *testing.T) {
	_, err := New(Config{Policy: engine(t, nil).Policy(), Targets: []string{"http://x"}, Headers: []Header{{"X-Api-Key", "abc1234"}}})
	want := "the value of the extra header X-Api-Key has 7 characters; conform treats it as a secret and needs at least 8 to redact it without garbling the output"
	if got := errText(err); got != want {
		t.Errorf("New = %q, want %q", got, want)
	}
}
