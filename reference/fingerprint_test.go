package reference

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var bodyOnly = newFingerprinter("sha256", oneCanonicalization(canonicalJSON), []string{"body"}, nil)

// canonicalBody returns the canonical text the fingerprint hashes for
// body, without the enclosing {"body":...}.
func canonicalBody(t *testing.T, body string) string {
	t.Helper()
	out, err := bodyOnly.appendCanonical(nil, &Request{Body: []byte(body)})
	if err != nil {
		t.Fatalf("canonicalising %s: %v", body, err)
	}
	s := string(out)
	if !strings.HasPrefix(s, `{"body":`) || !strings.HasSuffix(s, "}") {
		t.Fatalf("canonical object %s", s)
	}
	return s[len(`{"body":`) : len(s)-1]
}

func fingerprintOf(t *testing.T, f *fingerprinter, req *Request) string {
	t.Helper()
	fp, err := f.fingerprint(req)
	if err != nil {
		t.Fatalf("fingerprint: %v", err)
	}
	return fp
}

func bodyFingerprint(t *testing.T, body string) string {
	t.Helper()
	return fingerprintOf(t, bodyOnly, &Request{Body: []byte(body)})
}

// exactDigits is the oracle for integers beyond 2^53: the decimal digits
// of the exact value of a JSON number, or "" when it is not an integer
// that large.
func exactDigits(number string) string {
	f, _, err := big.ParseFloat(number, 10, 4096, big.ToNearestEven)
	if err != nil || !f.IsInt() || new(big.Float).Abs(f).Cmp(big.NewFloat(1<<53)) <= 0 {
		return ""
	}
	return f.Text('f', 0)
}

// TestFingerprintRFC8785Examples checks the canonical body against the
// examples published in RFC 8785: sections 3.2.2 and 3.2.3 and the number
// table of appendix B. As the spec requires, an integer beyond 2^53 keeps
// its exact digits where RFC 8785 writes the nearest double (1E30 ->
// 1e+30); everything else must be the RFC's text byte for byte.
// appendixB reads RFC 8785's Appendix B vectors from reference/jcs's
// testdata (one copy for both packages): a double's bits and its canonical
// text, except NaN and Infinity, which have none.
func appendixB(t *testing.T) []struct{ bits, rfc string } {
	t.Helper()
	data, err := os.ReadFile("jcs/testdata/rfc8785-appendix-b.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []struct{ bits, rfc string }
	for _, line := range strings.Split(string(data), "\n") {
		bits, rfc, _ := strings.Cut(line, " ")
		if line == "" || strings.HasPrefix(line, "#") || rfc == "" {
			continue
		}
		out = append(out, struct{ bits, rfc string }{bits, rfc})
	}
	if len(out) < 20 {
		t.Fatalf("only %d vectors", len(out))
	}
	return out
}

func TestFingerprintRFC8785Examples(t *testing.T) {
	t.Run("3.2.2", func(t *testing.T) {
		input := `{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
		rfc := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
		want := strings.Replace(rfc, "1e+30", "1"+strings.Repeat("0", 30), 1)
		if got := canonicalBody(t, input); got != want {
			t.Errorf("canonical body\n got %s\nwant %s", got, want)
		}
		if bodyFingerprint(t, input) != bodyFingerprint(t, rfc) {
			t.Error("the example and its RFC 8785 form fingerprint differently")
		}
	})
	t.Run("3.2.3", func(t *testing.T) {
		input := `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`
		want := `{"\r":"Carriage Return","1":"One","` + "\u0080" + `":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","דּ":"Hebrew Letter Dalet With Dagesh"}`
		if got := canonicalBody(t, input); got != want {
			t.Errorf("canonical body\n got %s\nwant %s", got, want)
		}
	})
	t.Run("appendix B", func(t *testing.T) {
		for _, v := range appendixB(t) {
			bits, err := strconv.ParseUint(v.bits, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			// Go's shortest round-trip spelling, which differs from the
			// RFC's in exponent and sign details (1e+21, -0).
			input := strconv.FormatFloat(math.Float64frombits(bits), 'g', -1, 64)
			want := v.rfc
			if exact := exactDigits(v.rfc); exact != "" {
				want = exact
			}
			if got := canonicalBody(t, input); got != want {
				t.Errorf("%s: canonical form of %s = %s, want %s", v.bits, input, got, want)
			}
			if bodyFingerprint(t, input) != bodyFingerprint(t, v.rfc) {
				t.Errorf("%s: %s and %s fingerprint differently", v.bits, input, v.rfc)
			}
		}
	})
}

// TestFingerprintEquivalence checks that bodies within a group share a
// fingerprint and that no two groups do.
func TestFingerprintEquivalence(t *testing.T) {
	groups := [][]string{
		{`{"a":1,"b":[1,2]}`, "{ \"b\" : [ 1 , 2 ] ,\n\t\"a\" : 1.0 }", `{"b":[1e0,2],"a":10e-1}`, `{"\u0061":1,"b":[0.1e1,2.00]}`},
		{`{"a":"1","b":[1,2]}`},        // a string is not a number
		{`{"a":1,"b":[2,1]}`},          // array order matters
		{`{"a":1,"b":[1,2],"c":null}`}, // an explicit null is not an absent member
		{`9007199254740993`, `9007199254740993.0`, `9.007199254740993e15`},
		{`9007199254740992`, `9007199254740992.00`}, // plain RFC 8785 rounds ...993 onto this
		{`-9007199254740993`},
		{`"100"`},
		{`100`, `100.0`, `1e2`, `1E+2`, `1000e-1`},
		{`true`},
		{`"true"`},
		{``, `null`, " null\n"}, // an empty body is the JSON null
		{`""`},
		{`"é/"`, `"\u00e9\/"`, `"\u00E9/"`},
		{`{}`},
		{`[]`},
	}
	seen := map[string]int{}
	for i, group := range groups {
		for _, body := range group {
			fp := bodyFingerprint(t, body)
			if j, ok := seen[fp]; ok && j != i {
				t.Errorf("%q shares its fingerprint with group %d %q", body, j, groups[j])
			}
			seen[fp] = i
			if first := bodyFingerprint(t, group[0]); fp != first {
				t.Errorf("%q and %q fingerprint differently", body, group[0])
			}
		}
	}
}

// TestFingerprintProperty generates random JSON values and serialises
// each twice at random (member order, whitespace, escapes, number
// spellings): both must share a fingerprint, and changing one scalar must
// change it.
func TestFingerprintProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(8785, 1))
	for i := range 500 {
		v := genValue(rng, 0)
		a, b := serialize(rng, v), serialize(rng, v)
		if bodyFingerprint(t, a) != bodyFingerprint(t, b) {
			t.Fatalf("case %d: equal values fingerprint differently:\n%s\n%s", i, a, b)
		}
		if m, ok := mutate(rng, v); ok {
			if c := serialize(rng, m); bodyFingerprint(t, a) == bodyFingerprint(t, c) {
				t.Fatalf("case %d: different values share a fingerprint:\n%s\n%s", i, a, c)
			}
		}
	}
}

// jsonNumber is a generated number: an integer (possibly beyond 2^53) or
// a fraction with a power-of-two denominator, so every spelling denotes
// the same double exactly.
type jsonNumber struct {
	integer  *big.Int // when not nil
	mantissa int64    // else the value is mantissa / 8
}

type jsonMember struct {
	name  string
	value any
}

func genValue(rng *rand.Rand, depth int) any {
	kinds := 8
	if depth > 3 {
		kinds = 6 // scalars only
	}
	switch rng.IntN(kinds) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		n := big.NewInt(rng.Int64N(2_000_000) - 1_000_000)
		if rng.IntN(3) == 0 { // around 2^53, where plain RFC 8785 collapses neighbours
			n.Add(big.NewInt(1<<53), big.NewInt(rng.Int64N(200)-100))
		}
		return jsonNumber{integer: n}
	case 3:
		return jsonNumber{mantissa: rng.Int64N(2000) - 1000}
	case 4, 5:
		return genString(rng)
	case 6:
		arr := make([]any, rng.IntN(4))
		for i := range arr {
			arr[i] = genValue(rng, depth+1)
		}
		return arr
	default:
		var obj []jsonMember
		names := map[string]bool{}
		for range rng.IntN(5) {
			name := genString(rng)
			if !names[name] {
				names[name] = true
				obj = append(obj, jsonMember{name, genValue(rng, depth+1)})
			}
		}
		return obj
	}
}

func genString(rng *rand.Rand) string {
	alphabet := []rune{'a', 'b', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', 0x01, 0x7f, 'é', '€', 0x2028, 0xfb33, '😀', 0x10ffff - 2}
	var b strings.Builder
	for range rng.IntN(6) {
		b.WriteRune(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}

// mutate changes one scalar of v: a number by one (at 2^53 too), a
// string's content, or a number into the string of its digits. It
// reports false when v has no scalar to change.
func mutate(rng *rand.Rand, v any) (any, bool) {
	switch x := v.(type) {
	case jsonNumber:
		if x.integer != nil {
			if rng.IntN(2) == 0 {
				return x.integer.String(), true // "100" is not 100
			}
			return jsonNumber{integer: new(big.Int).Add(x.integer, big.NewInt(1))}, true
		}
		return jsonNumber{mantissa: x.mantissa + 1}, true
	case string:
		return x + "x", true
	case bool:
		return !x, true
	case nil:
		return false, true
	case []any:
		if len(x) == 0 {
			return nil, false
		}
		i := rng.IntN(len(x))
		m, ok := mutate(rng, x[i])
		c := slices.Clone(x)
		c[i] = m
		return c, ok
	case []jsonMember:
		if len(x) == 0 {
			return nil, false
		}
		i := rng.IntN(len(x))
		m, ok := mutate(rng, x[i].value)
		c := slices.Clone(x)
		c[i].value = m
		return c, ok
	}
	panic(fmt.Sprintf("unexpected %T", v))
}

func serialize(rng *rand.Rand, v any) string {
	var b strings.Builder
	writeValue(rng, &b, v)
	return b.String()
}

func space(rng *rand.Rand, b *strings.Builder) {
	b.WriteString([]string{"", "", " ", "\n", "\t ", "\r\n  "}[rng.IntN(6)])
}

func writeValue(rng *rand.Rand, b *strings.Builder, v any) {
	space(rng, b)
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case jsonNumber:
		b.WriteString(spellNumber(rng, x))
	case string:
		writeString(rng, b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(rng, b, e)
		}
		space(rng, b)
		b.WriteByte(']')
	case []jsonMember:
		b.WriteByte('{')
		for i, j := range rng.Perm(len(x)) {
			if i > 0 {
				b.WriteByte(',')
			}
			space(rng, b)
			writeString(rng, b, x[j].name)
			space(rng, b)
			b.WriteByte(':')
			writeValue(rng, b, x[j].value)
		}
		space(rng, b)
		b.WriteByte('}')
	}
	space(rng, b)
}

func spellNumber(rng *rand.Rand, n jsonNumber) string {
	if n.integer != nil {
		s := n.integer.String()
		digits := strings.TrimPrefix(s, "-")
		sign := s[:len(s)-len(digits)]
		switch rng.IntN(4) {
		case 0:
			return s
		case 1:
			return s + ".0"
		case 2:
			return s + "e0"
		default: // d.ddd e+k
			return sign + digits[:1] + "." + digits[1:] + "0E+" + strconv.Itoa(len(digits)-1)
		}
	}
	// mantissa/8 has at most three decimals: write it as a decimal, then
	// optionally move the point into an exponent.
	m := n.mantissa * 125
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	switch rng.IntN(3) {
	case 0:
		return sign + strconv.FormatInt(m, 10) + "e-3"
	case 1:
		return sign + strconv.FormatInt(m/1000, 10) + "." + fmt.Sprintf("%03d", m%1000)
	default:
		return sign + strconv.FormatInt(m, 10) + "0E-4"
	}
}

func writeString(rng *rand.Rand, b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || rng.IntN(3) == 0:
			writeEscaped(b, r)
		case r == '/' && rng.IntN(2) == 0:
			b.WriteString(`\/`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func writeEscaped(b *strings.Builder, r rune) {
	if r >= 0x10000 {
		r -= 0x10000
		fmt.Fprintf(b, `\u%04X\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		return
	}
	fmt.Fprintf(b, `\u%04x`, r)
}

func TestFingerprintInputs(t *testing.T) {
	f := newFingerprinter("sha256", oneCanonicalization(canonicalJSON), []string{"query", "header:X-Client", "method", "path", "body", "header:x-client"}, nil)
	if got := len(f.inputs); got != 5 {
		t.Fatalf("header:X-Client and header:x-client should be one input, got %d inputs", got)
	}
	base := Request{Method: "POST", Path: "/orders", RawQuery: "a=1&b=2&b=3", Header: http.Header{"X-Client": {"web"}}, Body: []byte(`{"x":1}`)}
	canon, err := f.appendCanonical(nil, &base)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"body":{"x":1},"header:x-client":"web","method":"POST","path":"/orders","query":{"a":["1"],"b":["2","3"]}}`; string(canon) != want {
		t.Errorf("canonical object\n got %s\nwant %s", canon, want)
	}

	same := []func(r *Request){
		func(r *Request) { r.RawQuery = "b=2&a=1&b=3" },
		func(r *Request) { r.RawQuery = "a=%31&b=2&b=3" },
		func(r *Request) { r.Header = http.Header{"X-Client": {"web"}, "X-Other": {"ignored"}} },
	}
	different := []func(r *Request){
		func(r *Request) { r.RawQuery = "a=1&b=3&b=2" }, // value order
		func(r *Request) { r.RawQuery = "a=1&b=2" },
		func(r *Request) { r.Header = http.Header{} },                         // absent
		func(r *Request) { r.Header = http.Header{"X-Client": {""}} },         // empty is not absent
		func(r *Request) { r.Header = http.Header{"X-Client": {"web", "x"}} }, // repeated
		func(r *Request) { r.Method = "PUT" },
		func(r *Request) { r.Path = "/orders/1" },
		func(r *Request) { r.Body = []byte(`{"x":"1"}`) },
	}
	want := fingerprintOf(t, f, &base)
	for i, change := range same {
		r := base
		change(&r)
		if got := fingerprintOf(t, f, &r); got != want {
			t.Errorf("same[%d]: fingerprint changed", i)
		}
	}
	for i, change := range different {
		r := base
		change(&r)
		if got := fingerprintOf(t, f, &r); got == want {
			t.Errorf("different[%d]: fingerprint unchanged", i)
		}
	}
}

func TestFingerprintStringEscapes(t *testing.T) {
	got, err := appendString(nil, "a\"\\/\b\f\n\r\t\x01\x1f\x7fé\u2028", "test")
	if err != nil {
		t.Fatal(err)
	}
	if want := `"a\"\\/\b\f\n\r\t\u0001\u001f` + "\x7fé\u2028" + `"`; string(got) != want {
		t.Errorf("appendString = %s, want %s", got, want)
	}
}

func TestFingerprintRefusals(t *testing.T) {
	f := newFingerprinter("sha256", oneCanonicalization(canonicalJSON), []string{"body", "path", "query", "header:x-client"}, nil)
	tests := []struct {
		name  string
		req   Request
		input string
	}{
		{"invalid JSON", Request{Body: []byte(`{"a":}`)}, "body"},
		{"duplicate names", Request{Body: []byte(`{"a":1,"a":2}`)}, "body"},
		{"duplicate names once unescaped", Request{Body: []byte(`{"a":1,"\u0061":2}`)}, "body"},
		{"lone surrogate", Request{Body: []byte(`"\ud800"`)}, "body"},
		{"number out of range", Request{Body: []byte(`1e400`)}, "body"},
		{"two values", Request{Body: []byte(`1 2`)}, "body"},
		{"path not UTF-8", Request{Path: "/orders/\xff"}, "path"},
		{"header not UTF-8", Request{Header: http.Header{"X-Client": {"\xfe"}}}, "header:x-client"},
		{"query not UTF-8", Request{RawQuery: "a=%ff"}, "query"},
		{"query malformed", Request{RawQuery: "a=%zz"}, "query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.fingerprint(&tt.req)
			var pe *payloadError
			if !errors.As(err, &pe) || pe.input != tt.input {
				t.Fatalf("fingerprint = %v, want a payload error on %s", err, tt.input)
			}
			if !utf8.ValidString(err.Error()) {
				t.Errorf("message %q is not UTF-8", err)
			}
		})
	}
}

func TestFingerprintVariants(t *testing.T) {
	t.Run("sha512", func(t *testing.T) {
		fp := fingerprintOf(t, newFingerprinter("sha512", oneCanonicalization(canonicalJSON), []string{"body"}, nil), &Request{Body: []byte(`1`)})
		if !strings.HasPrefix(fp, "sha512:") || len(fp) != len("sha512:")+128 {
			t.Errorf("fingerprint %s", fp)
		}
	})
	t.Run("raw_bytes", func(t *testing.T) {
		f := newFingerprinter("sha256", oneCanonicalization(rawBytes), []string{"body"}, nil)
		a := fingerprintOf(t, f, &Request{Body: []byte(`{"a":1}`)})
		if b := fingerprintOf(t, f, &Request{Body: []byte(`{"a": 1}`)}); a == b {
			t.Error("raw_bytes: whitespace should change the fingerprint")
		}
		if _, err := f.fingerprint(&Request{Body: []byte("not json \xff")}); err != nil {
			t.Errorf("raw_bytes refuses a body that is not JSON: %v", err)
		}
	})
	t.Run("exclude_fields", func(t *testing.T) {
		f := newFingerprinter("sha256", oneCanonicalization(canonicalJSON), []string{"body"}, []string{"/meta/sent_at", "/items/0"})
		a := fingerprintOf(t, f, &Request{Body: []byte(`{"id":1,"meta":{"sent_at":"10:00","v":1},"items":["x","y"]}`)})
		if b := fingerprintOf(t, f, &Request{Body: []byte(`{"id":1,"meta":{"sent_at":"10:05","v":1},"items":["z","y"]}`)}); a != b {
			t.Error("a difference in excluded fields changed the fingerprint")
		}
		if c := fingerprintOf(t, f, &Request{Body: []byte(`{"id":1,"meta":{"sent_at":"10:00","v":2},"items":["x","y"]}`)}); a == c {
			t.Error("a difference outside the excluded fields left the fingerprint unchanged")
		}
	})
}

// TestRawDigest: the raw digest, which lets a byte-identical retry skip
// canonicalisation, must tell apart every raw input and every
// configuration.
func TestRawDigest(t *testing.T) {
	inputs := []string{"method", "path", "query", "body", "header:x-a"}
	f := newFingerprinter("sha256", oneCanonicalization(canonicalJSON), inputs, nil)
	base := Request{Method: "POST", Path: "/o", RawQuery: "a=1", Header: http.Header{"X-A": {"v"}}, Body: []byte(`{"x":1}`)}
	changes := map[string]func(r *Request){
		"method":           func(r *Request) { r.Method = "PUT" },
		"path":             func(r *Request) { r.Path = "/p" },
		"query":            func(r *Request) { r.RawQuery = "a=%31" },
		"body spelling":    func(r *Request) { r.Body = []byte(`{"x":1.0}`) },
		"header empty":     func(r *Request) { r.Header = http.Header{"X-A": {""}} },
		"header absent":    func(r *Request) { r.Header = http.Header{} },
		"field boundaries": func(r *Request) { r.Path, r.RawQuery = "/oa=1", "" },
	}
	seen := map[[32]byte]string{f.rawDigest(&base): "base"}
	for name, change := range changes {
		r := base
		change(&r)
		d := f.rawDigest(&r)
		if other, dup := seen[d]; dup {
			t.Errorf("%s has the raw digest of %s", name, other)
		}
		seen[d] = name
	}
	same := base
	same.Header = http.Header{"X-A": {"v"}, "X-Unrelated": {"1"}}
	if f.rawDigest(&same) != f.rawDigest(&base) {
		t.Error("an undeclared header changed the raw digest")
	}
	for _, other := range []*fingerprinter{
		newFingerprinter("sha512", oneCanonicalization(canonicalJSON), inputs, nil),
		newFingerprinter("sha256", oneCanonicalization(rawBytes), inputs, nil),
		newFingerprinter("sha256", oneCanonicalization(canonicalJSON), inputs, []string{"/x"}),
	} {
		if other.rawDigest(&base) == f.rawDigest(&base) {
			t.Errorf("configuration %q shares raw digests with %q", other.config, f.config)
		}
	}
}
