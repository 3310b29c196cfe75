package reference

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func formOf(t testing.TB, body string, exclude ...string) (string, error) {
	t.Helper()
	out, err := appendCanonicalForm(nil, []byte(body), formFieldNames(exclude))
	return string(out), err
}

func TestCanonicalForm(t *testing.T) {
	for _, tt := range []struct{ name, body, want string }{
		{"sorted by name", "currency=usd&amount=2000", "amount=2000&currency=usd"},
		{"values of one name keep their order", "b=2&a=z&b=1&a=y", "a=z&a=y&b=2&b=1"},
		{"plus and %20 are a space, written %20", "d=a+b&e=a%20b", "d=a%20b&e=a%20b"},
		{"unreserved kept, hex upper case", "k=%7e%2d%2E_x&j=%2f%3a%3B", "j=%2F%3A%3B&k=~-._x"},
		{"reserved and other bytes encoded", "q=a*b(c)!'@,;$", "q=a%2Ab%28c%29%21%27%40%2C%3B%24"},
		{"names with brackets (Stripe metadata)", "metadata[order_id]=6735&card[exp_month]=12", "card%5Bexp_month%5D=12&metadata%5Border_id%5D=6735"},
		{"UTF-8", "name=caf%C3%A9&city=Z%C3%BCrich", "city=Z%C3%BCrich&name=caf%C3%A9"},
		{"raw UTF-8 sent unencoded", "name=café", "name=caf%C3%A9"},
		{"empty segments hold no pair", "&a=1&&b=2&", "a=1&b=2"},
		{"a name without = has the empty value", "flag&a=1&flag=", "a=1&flag=&flag="},
		{"an empty name", "=x&a=1", "=x&a=1"},
		{"= in a value", "a=b=c", "a=b%3Dc"},
		{"byte order, not case order", "b=1&B=2&a=3&_=4", "B=2&_=4&a=3&b=1"},
		{"byte order of decoded names", "%C3%A9=1&~=2&z=3", "z=3&~=2&%C3%A9=1"},
		{"empty body", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := formOf(t, tt.body)
			if err != nil || got != tt.want {
				t.Errorf("canonical form of %q = %q, %v; want %q", tt.body, got, err, tt.want)
			}
		})
	}
}

// TestCanonicalFormOrder compares the order of many pairs, names sharing
// long prefixes and repeated, in runs or shuffled, with a stable sort's.
func TestCanonicalFormOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "items[0][price]", "items[0][quantity]", "items[1][price]", "items[10][price]", "items[1]", "é", "~", "A", "metadata[order_id]", "metadata[order]"}
	for range 300 {
		type pair struct{ name, value string }
		var pairs []pair
		for i := range rng.IntN(70) {
			pairs = append(pairs, pair{names[rng.IntN(len(names))], strconv.Itoa(i)})
		}
		if rng.IntN(2) == 0 { // runs in order, as clients write them
			slices.SortStableFunc(pairs[:len(pairs)/2], func(x, y pair) int { return strings.Compare(x.name, y.name) })
		}
		var body []string
		for _, p := range pairs {
			body = append(body, url.QueryEscape(p.name)+"="+p.value)
		}
		slices.SortStableFunc(pairs, func(x, y pair) int { return strings.Compare(x.name, y.name) })
		var want []string
		for _, p := range pairs {
			want = append(want, strings.NewReplacer("+", "%20").Replace(url.QueryEscape(p.name))+"="+p.value)
		}
		got, err := formOf(t, strings.Join(body, "&"))
		if err != nil || got != strings.Join(want, "&") {
			t.Fatalf("canonical form of %s\n got %s, %v\nwant %s", strings.Join(body, "&"), got, err, strings.Join(want, "&"))
		}
	}
}

// plainCanonicalForm is the canonical form as its definition reads, with
// nothing done for speed: split, decode with net/url, sort stably,
// encode.
func plainCanonicalForm(body string) (string, bool) {
	type pair struct{ name, value string }
	var pairs []pair
	for _, segment := range strings.Split(body, "&") {
		if segment == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(segment, "=")
		name, err1 := url.QueryUnescape(rawName)
		value, err2 := url.QueryUnescape(rawValue)
		if err1 != nil || err2 != nil || !utf8.ValidString(name) || !utf8.ValidString(value) {
			return "", false
		}
		pairs = append(pairs, pair{name, value})
	}
	slices.SortStableFunc(pairs, func(x, y pair) int { return strings.Compare(x.name, y.name) })
	encode := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if c := s[i]; unreserved[c] {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		}
		return b.String()
	}
	var out []string
	for _, p := range pairs {
		out = append(out, encode(p.name)+"="+encode(p.value))
	}
	return strings.Join(out, "&"), true
}

// TestCanonicalFormAgainstPlain compares random bodies, pairs spelt
// canonically already or not (lower-case hex, an unreserved byte as %XX,
// "+", raw bytes, "=" in a value, truncated %), with plainCanonicalForm.
func TestCanonicalFormAgainstPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tokens := []string{"a", "b", "items", "0", "1", "10", "%5B", "%5D", "%5b", "%5d", "[", "]", "%41", "%7E", "~", "_", "%25", "%", "%4", "+", "%20", " ", "%C3%A9", "%c3%a9", "é", "%C3", "%FF", "%80", "%E2%82%AC", "%e2%82%ac", "\xff", "=", "&", "%3D", "%26", "*", "%2A"}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(24) {
			b.WriteString(tokens[rng.IntN(len(tokens))])
		}
		body := b.String()
		got, err := formOf(t, body)
		want, ok := plainCanonicalForm(body)
		if (err == nil) != ok || got != want {
			t.Fatalf("canonical form of %q = %q, %v; want %q, accepted %v", body, got, err, want, ok)
		}
	}
}

func TestCanonicalFormExclude(t *testing.T) {
	got, err := formOf(t, "b=1&sent_at=1700&a=2&sent_at=1701&x/y=3&m~n=4", "/sent_at", "/x~1y", "/m~0n", "/a/deeper")
	if want := "a=2&b=1"; err != nil || got != want {
		t.Errorf("excluded: %q, %v; want %q", got, err, want)
	}
}

func TestCanonicalFormRefuses(t *testing.T) {
	for _, tt := range []struct{ name, body, reason string }{
		{"% without digits", "a=%zz", `"%" not followed by two hexadecimal digits at byte 2`},
		{"% with one digit", "a=1&b=%4", `"%" not followed by two hexadecimal digits at byte 6`},
		{"% at the end of a name", "a%=1", `"%" not followed by two hexadecimal digits at byte 1`},
		{"decoded bytes not UTF-8", "a=1&b=%FF", "not UTF-8 once decoded at byte 4"},
		{"a name not UTF-8", "%C3=1", "not UTF-8 once decoded at byte 0"},
		{"raw bytes not UTF-8", "a=\xff", "not UTF-8 once decoded at byte 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := formOf(t, tt.body)
			var fe *formError
			if !errors.As(err, &fe) || !strings.HasSuffix(err.Error(), tt.reason) {
				t.Errorf("canonical form of %q = %q, %v; want an error ending %q", tt.body, got, err, tt.reason)
			}
		})
	}
}

// formPolicy is a Stripe-like policy: form bodies, JSON bodies, nothing
// else.
var formPolicy = map[string]any{
	"/idempotency_fingerprint/canonicalization": map[string]any{
		"application/json":                  "canonical_json",
		"application/x-www-form-urlencoded": "canonical_form",
	},
	"/idempotency_fingerprint/exclude_fields": []any{"/expand"},
}

func formCall(key, contentType, body string) call {
	return call{key: key, body: body, header: http.Header{"Content-Type": {contentType}}}
}

const formType = "application/x-www-form-urlencoded"

// TestFormBodies: a Stripe-style form POST, its duplicate with the pairs
// in another order replays; a changed field conflicts; a media type the
// policy does not name is 415, a body its canonicalization cannot read
// 400.
func TestFormBodies(t *testing.T) {
	a := &app{}
	h := newEngine(t, formPolicy).Middleware(a)
	first := do(h, formCall("k1", formType, "amount=2000&currency=usd&metadata[order_id]=6735&expand=customer"))
	if first.Code != http.StatusCreated {
		t.Fatalf("first: %d %s", first.Code, first.Body)
	}
	for _, step := range []struct {
		name, contentType, body string
		status                  int
		code                    string
	}{
		{"reordered duplicate", formType, "metadata%5Border_id%5D=6735&expand=customer&currency=usd&amount=2000", 201, ""},
		{"with parameters, upper case", "Application/X-WWW-Form-Urlencoded; charset=utf-8", "currency=usd&amount=2000&metadata[order_id]=6735", 201, ""},
		{"excluded field differs", formType, "currency=usd&amount=2000&metadata[order_id]=6735&expand=invoice", 201, ""},
		{"changed field", formType, "amount=2001&currency=usd&metadata[order_id]=6735", 422, "idempotency_key_reused"},
		{"the same text as JSON", "application/json", `{"amount":"2000"}`, 422, "idempotency_key_reused"},
		{"unnamed media type", "text/plain", "amount=2000&currency=usd", 415, CodeUnsupportedMedia},
		{"no media type", "", "amount=2000&currency=usd", 415, CodeUnsupportedMedia},
		{"bad percent-encoding", formType, "amount=20%G0&currency=usd", 400, CodeNotCanonicalizable},
		{"invalid UTF-8", formType, "amount=2000&currency=%E9", 400, CodeNotCanonicalizable},
	} {
		c := formCall("k1", step.contentType, step.body)
		if step.contentType == "" {
			c.header = nil
		}
		w := do(h, c)
		if step.code != "" {
			wantProblem(t, w, step.status, step.code)
			continue
		}
		if w.Code != step.status || w.Header().Get("Idempotent-Replayed") != "true" || w.Body.String() != first.Body.String() {
			t.Errorf("%s: %d, replayed %q, body %s; want the first answer replayed", step.name, w.Code, w.Header().Get("Idempotent-Replayed"), w.Body)
		}
	}
	if runs := a.runs.Load(); runs != 1 {
		t.Errorf("%d executions, want 1", runs)
	}
	// A JSON body under the same policy is canonical JSON as ever.
	if w := do(h, formCall("k2", "application/json", `{"b":1,"a":2}`)); w.Code != 201 {
		t.Fatalf("JSON first: %d %s", w.Code, w.Body)
	}
	if w := do(h, formCall("k2", "application/json; charset=utf-8", `{ "a": 2.0, "b": 1 }`)); w.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("JSON duplicate: %d, not replayed", w.Code)
	}
	// A bodiless request needs no media type.
	if w := do(h, call{key: "k3", method: "POST", path: "/orders/1/cancel"}); w.Code != 201 {
		t.Errorf("bodiless: %d %s", w.Code, w.Body)
	}
}

// TestFormFallback: "*/*" canonicalises every type the policy does not
// name, so nothing is 415.
func TestFormFallback(t *testing.T) {
	e := newEngine(t, map[string]any{"/idempotency_fingerprint/canonicalization": map[string]any{
		formType: "canonical_form", "*/*": "raw_bytes",
	}})
	h := e.Middleware(&app{})
	if w := do(h, formCall("k", "text/plain", "b a")); w.Code != 201 {
		t.Fatalf("first: %d %s", w.Code, w.Body)
	}
	if w := do(h, formCall("k", "text/csv", "b a")); w.Code != 201 || w.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("duplicate of another unnamed type: %d, replayed %q", w.Code, w.Header().Get("Idempotent-Replayed"))
	}
	if w := do(h, formCall("k", formType, "b a")); w.Code != 422 {
		t.Errorf("the same bytes as a form: %d, want 422 (read otherwise, another payload)", w.Code)
	}
}

// FuzzCanonicalForm holds the canonical form to what net/url decodes: the
// same pairs, in the canonical order and spelling, and canonical itself.
func FuzzCanonicalForm(f *testing.F) {
	for _, s := range []string{"b=2&a=1", "a=%7e+x&a=%2F", "&&=x&flag", "metadata[k]=v", "a=%zz", "%C3%A9=%FF", "a;b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, err := formOf(t, body)
		if err != nil {
			return
		}
		for i := 0; i < len(got); i++ {
			switch c := got[i]; {
			case unreserved[c], c == '=', c == '&':
			case c == '%' && i+2 < len(got) && strings.IndexByte("0123456789ABCDEF", got[i+1]) >= 0 && strings.IndexByte("0123456789ABCDEF", got[i+2]) >= 0:
				i += 2
			default:
				t.Fatalf("canonical form %q of %q has %q at %d", got, body, c, i)
			}
		}
		var prev string
		for i, p := range strings.Split(got, "&") {
			name, _ := url.QueryUnescape(strings.SplitN(p, "=", 2)[0])
			if i > 0 && name < prev {
				t.Fatalf("canonical form %q of %q: %q after %q", got, body, name, prev)
			}
			prev = name
		}
		again, err := formOf(t, got)
		if err != nil || again != got {
			t.Fatalf("canonical form of %q is %q, which canonicalises to %q, %v", body, got, again, err)
		}
		want, err := url.ParseQuery(body)
		if err != nil || strings.Contains(body, ";") {
			return // net/url refuses ";", and "%" as this does
		}
		parsed, err := url.ParseQuery(got)
		if err != nil || !maps.EqualFunc(parsed, want, slices.Equal) {
			t.Fatalf("canonical form %q of %q reads as %v, %v; the body as %v", got, body, parsed, err, want)
		}
	})
}
