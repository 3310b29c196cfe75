package jcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

func mustCanon(t testing.TB, f func([]byte) ([]byte, error), in string) string {
	t.Helper()
	out, err := f([]byte(in))
	if err != nil {
		t.Fatalf("canonicalising %q: %v", in, err)
	}
	return string(out)
}

// TestRFC8785Examples runs the published examples: the sample of RFC 8785
// section 3.2.2 (whose UTF-8 bytes section 3.2.4 lists), the sorting example
// of section 3.2.3, and the test data of the RFC author's reference
// implementation (github.com/cyberphone/json-canonicalization, testdata/).
func TestRFC8785Examples(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"section 3.2.2 sample", `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`, `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
		{"section 3.2.3 sorting", `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis",
  "<": "Less Than"
}`, "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"<\":\"Less Than\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"},
		{"arrays", "[\n  56,\n  {\n    \"d\": true,\n    \"10\": null,\n    \"1\": [ ]\n  }\n]\n", `[56,{"1":[],"10":null,"d":true}]`},
		{"french", `{
  "peach": "This sorting order",
  "péché": "is wrong according to French",
  "pêche": "but canonicalization MUST",
  "sin":   "ignore locale"
}`, `{"peach":"This sorting order","péché":"is wrong according to French","pêche":"but canonicalization MUST","sin":"ignore locale"}`},
		{"structures", `{
  "1": {"f": {"f": "hi","F": 5} ,"\n": 56.0},
  "10": { },
  "": "empty",
  "a": { },
  "111": [ {"e": "yes","E": "no" } ],
  "A": { }
}`, `{"":"empty","1":{"\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{"E":"no","e":"yes"}],"A":{},"a":{}}`},
		{"unicode", `{"Unnormalized Unicode":"A\u030a"}`, "{\"Unnormalized Unicode\":\"A\u030a\"}"},
		{"weird", `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\u000a": "Newline",
  "1": "One",
  "\u0080": "Control\u007f",
  "\ud83d\ude02": "Smiley",
  "\u00f6": "Latin Small Letter O With Diaeresis",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "</script>": "Browser Challenge"
}`, "{\"\\n\":\"Newline\",\"\\r\":\"Carriage Return\",\"1\":\"One\",\"</script>\":\"Browser Challenge\",\"\u0080\":\"Control\u007f\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F602\":\"Smiley\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"},
		{"literals", " true ", "true"},
		{"bare string", `  "this is a test string 1235"`, `"this is a test string 1235"`},
		{"escapes", `"\b\t\n\f\r\u0000\u001f\u007F\u2028\/\""`, `"\b\t\n\f\r\u0000\u001f` + "\u007f\u2028" + `/\""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustCanon(t, Canonicalize, tt.in); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}

	// Section 3.2.4 gives the sample's output as UTF-8 bytes.
	const hex = "7b226c69746572616c73223a5b6e756c6c2c747275652c66616c73655d2c226e756d62657273223a5b3333333333333333332e333333333333332c31652b33302c342e352c302e3030322c31652d32375d2c22737472696e67223a22e282ac245c7530303066" +
		"5c6e4127425c225c5c5c5c5c222f227d"
	if got := fmt.Sprintf("%x", mustCanon(t, Canonicalize, tests[0].in)); got != hex {
		t.Errorf("section 3.2.4 bytes:\ngot  %s\nwant %s", got, hex)
	}
}

// appendixB reads the Appendix B vectors: bit patterns and their canonical
// text ("" for NaN and Infinity). The engine's tests read the same file.
func appendixB(t *testing.T, path string) []struct{ bits, want string } {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []struct{ bits, want string }
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bits, want, _ := strings.Cut(line, " ")
		out = append(out, struct{ bits, want string }{bits, want})
	}
	if len(out) < 20 {
		t.Fatalf("%s: only %d vectors", path, len(out))
	}
	return out
}

// TestNumberVectors checks Appendix B twice: the formatter on the bit
// pattern, and the whole pipeline on a 21-significant-digit spelling of the
// same double, so parsing and rounding are covered as well.
func TestNumberVectors(t *testing.T) {
	for _, v := range appendixB(t, "testdata/rfc8785-appendix-b.txt") {
		u, err := strconv.ParseUint(v.bits, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		f := math.Float64frombits(u)
		if v.want == "" {
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				t.Fatalf("%s: expected NaN or Inf", v.bits)
			}
			continue
		}
		if got := string(appendES6(nil, f)); got != v.want {
			t.Errorf("appendES6(%s) = %s, want %s", v.bits, got, v.want)
		}
		in := strconv.FormatFloat(f, 'e', 20, 64)
		if got := mustCanon(t, Canonicalize, in); got != v.want {
			t.Errorf("Canonicalize(%s) [%s] = %s, want %s", in, v.bits, got, v.want)
		}
	}
}

func TestNumberCorners(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1e21", "1e+21"},
		{"1e20", "100000000000000000000"},
		{"1e-7", "1e-7"},
		{"1e-6", "0.000001"},
		{"0.000001", "0.000001"},
		{"-0", "0"},
		{"-0.0", "0"},
		{"-0e-5", "0"},
		{"0E+7", "0"},
		{"1.0", "1"},
		{"1e0", "1"},
		{"10e-1", "1"},
		{"1E+2", "100"},
		{"-1.5e-9", "-1.5e-9"},
		{"123456789012345", "123456789012345"},
		{"1234567890123456789", "1234567890123456800"},
		{"9007199254740993", "9007199254740992"}, // the trap, as RFC 8785 has it
		{"1e-400", "0"},                          // underflow rounds to zero, as in ECMAScript
		{"1.7976931348623158e308", "1.7976931348623157e+308"},
		{"4.9406564584124654e-324", "5e-324"},
		{"100000000000000000000000", "1e+23"},
	}
	for _, tt := range tests {
		if got := mustCanon(t, Canonicalize, tt.in); got != tt.want {
			t.Errorf("Canonicalize(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestNumbersAgainstStrconv checks the number fast paths (literals copied
// verbatim) against the general path on random literals of every shape.
func TestNumbersAgainstStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 100_000 {
		lit := randomDigits(r, 1+r.IntN(18))
		if k := r.IntN(len(lit) + 1); k < len(lit) {
			if k == 0 {
				lit = "0." + strings.Repeat("0", r.IntN(8)) + lit
			} else {
				lit = lit[:k] + "." + lit[k:]
			}
		}
		if r.IntN(4) == 0 {
			lit += "e" + strconv.Itoa(r.IntN(60)-30)
		}
		if r.IntN(2) == 0 {
			lit = "-" + lit
		}
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := mustCanon(t, Canonicalize, lit), string(appendES6(nil, f)); got != want {
			t.Fatalf("Canonicalize(%s) = %s, want %s", lit, got, want)
		}
	}
}

// TestLargeObject covers objects past the insertion-sort size.
func TestLargeObject(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	g := gen{r}
	for range 200 {
		v := jv{kind: kObject}
		seen := map[string]bool{}
		for range 13 + r.IntN(200) {
			if name := g.string() + g.string(); !seen[name] {
				seen[name] = true
				v.names = append(v.names, name)
				v.elems = append(v.elems, jv{kind: kNull})
			}
		}
		var want strings.Builder
		reference(&want, v, false)
		in := spelled(v, r)
		if got := mustCanon(t, Canonicalize, string(in)); got != want.String() {
			t.Fatalf("input %s\ngot  %s\nwant %s", in, got, want.String())
		}
		// Repeat one member, spelt differently, at a random place.
		dup := v.names[r.IntN(len(v.names))]
		var b strings.Builder
		spellString(&b, dup, r)
		at := 1 + r.IntN(len(in)-1)
		for in[at-1] != '{' && in[at-1] != ',' {
			at--
		}
		in = []byte(string(in[:at]) + b.String() + ":0," + string(in[at:]))
		var e *Error
		if _, err := Canonicalize(in); !errors.As(err, &e) || e.Reason != "duplicate object member name" {
			t.Fatalf("duplicate %+q in %s: got %v", dup, in, err)
		}
	}
}

func TestErrors(t *testing.T) {
	deep := func(n int, open, close string) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	tests := []struct {
		name, in, reason string
		off              int
	}{
		{"empty", "", "unexpected end of input", 0},
		{"only whitespace", " \n", "unexpected end of input", 2},
		{"duplicate", `{"a":1,"a":2}`, "duplicate object member name", 7},
		{"duplicate via escape", `{"a":1,"\u0061":2}`, "duplicate object member name", 7},
		{"duplicate via escape first", `{"\u0061":1,"b":0,"a":2}`, "duplicate object member name", 18},
		{"duplicate nested", `[{"x":{"k":1,"j":2,"k":3}}]`, "duplicate object member name", 19},
		{"duplicate surrogate pair", `{"😀":1,"\ud83d\ude00":2}`, "duplicate object member name", 10},
		{"lone high surrogate", `"\ud800"`, "lone high surrogate", 1},
		{"high surrogate then char", `"\ud800x"`, "lone high surrogate", 1},
		{"high surrogate then high", `"\ud800\ud800"`, "lone high surrogate", 1},
		{"lone low surrogate", `"a\udc00"`, "lone low surrogate", 2},
		{"raw surrogate (CESU-8)", "\"\xed\xa0\x80\"", "invalid UTF-8", 1},
		{"invalid UTF-8", "\"a\xff\"", "invalid UTF-8", 2},
		{"truncated UTF-8", "\"\xe2\x82\"", "invalid UTF-8", 1},
		{"overlong UTF-8", "\"\xc0\xaf\"", "invalid UTF-8", 1},
		{"UTF-8 outside string", "[\xc3\xa9]", "unexpected character", 1},
		{"byte order mark", "\xef\xbb\xbf{}", "unexpected character", 0},
		{"noncharacter raw", "\"\uFFFE\"", "noncharacter", 1},
		{"noncharacter escaped", `"\ufdd0"`, "noncharacter", 1},
		{"noncharacter pair", `"\ud83f\udfff"`, "noncharacter", 1},
		{"raw control", "\"a\tb\"", "control character", 2},
		{"bad escape", `"\x41"`, "invalid escape", 1},
		{"short \\u", `"\u12"`, "invalid \\u escape", 1},
		{"NaN", `NaN`, "unexpected character", 0},
		{"Infinity", `[Infinity]`, "unexpected character", 1},
		{"-Infinity", `-Infinity`, "invalid number", 1},
		{"overflow", `1e400`, "outside IEEE-754 double range", 0},
		{"negative overflow", `[-1.8e308]`, "outside IEEE-754 double range", 1},
		{"huge exponent", `1e99999999999999999999`, "outside IEEE-754 double range", 0},
		{"leading zero", `01`, "leading zero", 0},
		{"leading zero negative", `[-012]`, "leading zero", 2},
		{"plus sign", `+1`, "unexpected character", 0},
		{"bare point", `.5`, "unexpected character", 0},
		{"trailing point", `1.`, "unexpected end of input", 2},
		{"point then exponent", `[1.e5]`, "no digit after '.'", 3},
		{"empty exponent", `1e+`, "unexpected end of input", 3},
		{"hex", `0x10`, "unexpected content", 1},
		{"trailing comma array", `[1,2,]`, "trailing comma in array", 5},
		{"trailing comma object", `{"a":1,}`, "trailing comma in object", 7},
		{"missing comma", `[1 2]`, "expected ',' or ']'", 3},
		{"missing colon", `{"a" 1}`, "expected ':'", 5},
		{"unquoted name", `{a:1}`, "expected string for object member name", 1},
		{"single quotes", `['a']`, "unexpected character", 1},
		{"line comment", "{} // c", "unexpected content", 3},
		{"block comment", "[/* c */1]", "unexpected character", 1},
		{"trailing content", `{"a":1} {"b":2}`, "unexpected content after the JSON value", 8},
		{"two values", `1 2`, "unexpected content", 2},
		{"bad literal", `tru`, "invalid literal", 0},
		{"literal prefix", `nullx`, "unexpected content", 4},
		{"unterminated string", `"abc`, "unexpected end of input", 4},
		{"unterminated array", `[1,`, "unexpected end of input", 3},
		{"unterminated object", `{"a":`, "unexpected end of input", 5},
		{"vertical tab space", "\v1", "unexpected character", 0},
		{"nesting 1001 arrays", deep(MaxDepth+1, "[", "]"), "nesting deeper than 1000", MaxDepth},
		{"nesting 1001 objects", strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1), "nesting deeper than 1000", 5 * MaxDepth},
		{"nesting a million", strings.Repeat("[", 1_000_000), "nesting deeper than 1000", MaxDepth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range []func([]byte) ([]byte, error){Canonicalize, CanonicalizeExact} {
				out, err := f([]byte(tt.in))
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("got %q, %v; want *Error", out, err)
				}
				if !strings.Contains(e.Reason, tt.reason) || e.Offset != tt.off {
					t.Errorf("got %q at %d, want %q at %d", e.Reason, e.Offset, tt.reason, tt.off)
				}
				if out != nil {
					t.Errorf("output %q alongside error", out)
				}
			}
		})
	}

	// Exactly MaxDepth levels are fine.
	for _, in := range []string{deep(MaxDepth, "[", "]"), strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth)} {
		out, err := Canonicalize([]byte(in))
		if err != nil || string(out) != in {
			t.Errorf("depth %d: err %v", MaxDepth, err)
		}
	}
}

func TestExact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"9007199254740993", "9007199254740993"},
		{"9007199254740993.0", "9007199254740993"},
		{"9.007199254740993e15", "9007199254740993"},
		{"90071992547409930e-1", "9007199254740993"},
		{"900719925474099.3E1", "9007199254740993"},
		{"0.9007199254740993e+16", "9007199254740993"},
		{"9007199254740992", "9007199254740992"},
		{"-9007199254740993", "-9007199254740993"},
		{"-9007199254740993.000", "-9007199254740993"},
		{"-9.007199254740993e15", "-9007199254740993"},
		{"-90071992547409930e-1", "-9007199254740993"},
		{"9007199254740991", "9007199254740991"}, // 2^53-1: JCS already exact
		{"9.007199254740991e15", "9007199254740991"},
		{"-9007199254740991", "-9007199254740991"},
		{"1e30", "1000000000000000000000000000000"},
		{"1E+30", "1000000000000000000000000000000"},
		{"18446744073709551616", "18446744073709551616"},
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{"1e308", "1" + strings.Repeat("0", 308)},
		{"1.7976931348623157e308", "17976931348623157" + strings.Repeat("0", 292)},
		{"0", "0"},
		{"-0", "0"},
		{"-0.0e10", "0"},
		{"0e999999999999", "0"},
		{"100", "100"},
		{"1.0", "1"},
		{"10e-1", "1"},
		{"-1e2", "-100"},
		// Non-integers keep RFC 8785 formatting, rounding included.
		{"1.5", "1.5"},
		{"333333333.33333329", "333333333.3333333"},
		{"1e-7", "1e-7"},
		{"1e-400", "0"},
		{"1.00000000000000001", "1"},
		{"9007199254740990.5", "9007199254740990"}, // below 2^53-1: rounds, as RFC 8785 does
		// Non-integers beyond 2^53-1 are exact too: no double can hold
		// them, and RFC rounding would land them on a big integer's form.
		{"9007199254740993.5", "9007199254740993.5"},
		{"9007199254740991.5", "9007199254740991.5"},
		{"9007199254740991.50", "9007199254740991.5"},
		{"-9.00719925474099225e15", "-9007199254740992.25"},
		{"1000000000000000000000.1", "1000000000000000000000.1"},
		{"10000000000000000000001e-1", "1000000000000000000000.1"},
		{"123456789012345678.9e2", "12345678901234567890"},
	}
	for _, tt := range tests {
		if got := mustCanon(t, CanonicalizeExact, tt.in); got != tt.want {
			t.Errorf("CanonicalizeExact(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}

	// The trap: plain JCS merges these, the exact variant must not.
	a := mustCanon(t, CanonicalizeExact, `{"amount":9007199254740993}`)
	b := mustCanon(t, CanonicalizeExact, `{"amount":9007199254740992}`)
	if a == b {
		t.Errorf("9007199254740993 and 9007199254740992 share the canonical form %s", a)
	}
	if mustCanon(t, Canonicalize, `9007199254740993`) != mustCanon(t, Canonicalize, `9007199254740992`) {
		t.Error("plain JCS is expected to round 9007199254740993 onto 9007199254740992")
	}

	// 9007199254740993.5 rounds to 9007199254740994 in RFC 8785; exact
	// mode must not give it that integer's form.
	if mustCanon(t, CanonicalizeExact, "9007199254740993.5") == mustCanon(t, CanonicalizeExact, "9007199254740994") {
		t.Error("9007199254740993.5 shares the canonical form of 9007199254740994")
	}

	// The same range rules as plain mode.
	for _, in := range []string{"1e309", "-1e400", "1" + strings.Repeat("0", 309), "1.8e308", "1e999999"} {
		if _, err := CanonicalizeExact([]byte(in)); err == nil {
			t.Errorf("CanonicalizeExact(%.20s...) accepted an out-of-range number", in)
		}
	}
	// The expansion budget: 3000 copies of 1e308 add 924000 zeros, 3500
	// would add 1078000, more than 1 MiB.
	many := func(n int) []byte { return []byte("[" + strings.Repeat("1e308,", n-1) + "1e308]") }
	if out, err := CanonicalizeExact(many(3000)); err != nil || len(out) != 3000*310+1 {
		t.Errorf("3000 x 1e308: %d bytes, %v", len(out), err)
	}
	var e *Error
	if _, err := CanonicalizeExact(many(3500)); !errors.As(err, &e) || !strings.Contains(e.Reason, "1 MiB") {
		t.Errorf("3500 x 1e308: got %v, want the expansion limit", err)
	}
	if _, err := Canonicalize(many(3500)); err != nil {
		t.Errorf("plain mode has no expansion: %v", err)
	}

	// 309 digits that still round to MaxFloat64 are in range in both modes.
	in := "17976931348623158" + strings.Repeat("0", 292)
	if _, err := Canonicalize([]byte(in)); err != nil {
		t.Errorf("Canonicalize: %v", err)
	}
	if got := mustCanon(t, CanonicalizeExact, in); got != in {
		t.Errorf("CanonicalizeExact(%s) = %s", in, got)
	}
}

// TestExactAgreesWithBigRat checks the exact variant against math/big on
// literals spelt in many ways, around 2^53 and well beyond it.
func TestExactAgreesWithBigRat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		d, exp := randomDigits(r, 1+r.IntN(30)), r.IntN(40)-20
		if r.IntN(2) == 0 { // land next to 2^53-1, with 15 to 17 integer digits
			d = maxSafe[:10+r.IntN(7)] + randomDigits(r, 1+r.IntN(6))
			exp = 15 + r.IntN(3) - len(d)
		}
		lit := d + "e" + strconv.Itoa(exp)
		if r.IntN(2) == 0 {
			lit = "-" + lit
		}
		got, err := CanonicalizeExact([]byte(lit))
		if err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		if want := exactReference(lit); string(got) != want {
			t.Fatalf("CanonicalizeExact(%s) = %s, want %s", lit, got, want)
		}
	}
}

// exactReference is what CanonicalizeExact should write for the number
// literal lit, computed with math/big.
func exactReference(lit string) string {
	v, ok := new(big.Rat).SetString(lit)
	if !ok {
		panic(lit)
	}
	safe := new(big.Rat).SetInt64(1<<53 - 1)
	switch {
	case v.IsInt():
		return v.Num().String()
	case new(big.Rat).Abs(v).Cmp(safe) > 0:
		s := v.FloatString(len(lit)) // enough places for any literal's fraction
		return strings.TrimRight(s, "0")
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		panic(err)
	}
	return string(appendES6(nil, f))
}

func randomDigits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	if b[0] == '0' && n > 1 {
		b[0] = '1'
	}
	return string(b)
}

func TestExclude(t *testing.T) {
	const doc = `{
		"a": {"b": 1, "c": [10, 20, {"d": 3, "e": 4}]},
		"x/y": 5, "m~n": 6, "~1": 7, "": 8,
		"big": 9007199254740993,
		"ts": "2024-01-01T00:00:00Z"
	}`
	tests := []struct {
		name    string
		exclude []string
		want    string
	}{
		{"none", nil, `{"":8,"a":{"b":1,"c":[10,20,{"d":3,"e":4}]},"big":9007199254740993,"m~n":6,"ts":"2024-01-01T00:00:00Z","x/y":5,"~1":7}`},
		{"top-level member", []string{"/ts"}, `{"":8,"a":{"b":1,"c":[10,20,{"d":3,"e":4}]},"big":9007199254740993,"m~n":6,"x/y":5,"~1":7}`},
		{"nested member", []string{"/a/b"}, `{"":8,"a":{"c":[10,20,{"d":3,"e":4}]},"big":9007199254740993,"m~n":6,"ts":"2024-01-01T00:00:00Z","x/y":5,"~1":7}`},
		{"~1 is /", []string{"/x~1y"}, `{"":8,"a":{"b":1,"c":[10,20,{"d":3,"e":4}]},"big":9007199254740993,"m~n":6,"ts":"2024-01-01T00:00:00Z","~1":7}`},
		{"~0 is ~", []string{"/m~0n"}, `{"":8,"a":{"b":1,"c":[10,20,{"d":3,"e":4}]},"big":9007199254740993,"ts":"2024-01-01T00:00:00Z","x/y":5,"~1":7}`},
		{"~01 is ~1, not /", []string{"/~01"}, `{"":8,"a":{"b":1,"c":[10,20,{"d":3,"e":4}]},"big":9007199254740993,"m~n":6,"ts":"2024-01-01T00:00:00Z","x/y":5}`},
		{"empty name", []string{"/"}, `{"a":{"b":1,"c":[10,20,{"d":3,"e":4}]},"big":9007199254740993,"m~n":6,"ts":"2024-01-01T00:00:00Z","x/y":5,"~1":7}`},
		{"array index", []string{"/a/c/0"}, `{"":8,"a":{"b":1,"c":[20,{"d":3,"e":4}]},"big":9007199254740993,"m~n":6,"ts":"2024-01-01T00:00:00Z","x/y":5,"~1":7}`},
		{"indices resolve against the original", []string{"/a/c/0", "/a/c/1"}, `{"":8,"a":{"b":1,"c":[{"d":3,"e":4}]},"big":9007199254740993,"m~n":6,"ts":"2024-01-01T00:00:00Z","x/y":5,"~1":7}`},
		{"inside array element", []string{"/a/c/2/e"}, `{"":8,"a":{"b":1,"c":[10,20,{"d":3}]},"big":9007199254740993,"m~n":6,"ts":"2024-01-01T00:00:00Z","x/y":5,"~1":7}`},
		{"whole subtree", []string{"/a", "/a/b"}, `{"":8,"big":9007199254740993,"m~n":6,"ts":"2024-01-01T00:00:00Z","x/y":5,"~1":7}`},
		{"absent pointers", []string{"/nope", "/a/c/3", "/a/c/-", "/a/c/01", "/a/c/x", "/a/b/deeper", "/ts/0"}, `{"":8,"a":{"b":1,"c":[10,20,{"d":3,"e":4}]},"big":9007199254740993,"m~n":6,"ts":"2024-01-01T00:00:00Z","x/y":5,"~1":7}`},
		{"all members", []string{"/a", "/x~1y", "/m~0n", "/~01", "/", "/big", "/ts"}, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CanonicalizeExactWithout([]byte(doc), tt.exclude)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			// The order of pointers must not matter.
			rev := slices.Clone(tt.exclude)
			slices.Reverse(rev)
			if again, _ := CanonicalizeExactWithout([]byte(doc), rev); !bytes.Equal(again, got) {
				t.Errorf("reversed pointers: %s", again)
			}
		})
	}

	// Names are matched after unescaping, as duplicates are.
	if got, _ := CanonicalizeExactWithout([]byte(`{"\u0061/b":1,"c":2}`), []string{"/a~1b"}); string(got) != `{"c":2}` {
		t.Errorf("escaped name: got %s", got)
	}
	// Array elements in a root array.
	if got, _ := CanonicalizeExactWithout([]byte(`[0,1,2]`), []string{"/1"}); string(got) != `[0,2]` {
		t.Errorf("root array: got %s", got)
	}
	// Excluded parts are still validated.
	if _, err := CanonicalizeExactWithout([]byte(`{"a":{"x":1,"x":2}}`), []string{"/a"}); err == nil {
		t.Error("duplicate inside an excluded member was accepted")
	}
	// Bad pointers are caller bugs: plain errors, reported before the body.
	for _, ptr := range []string{"", "a", "/a~", "/a~2"} {
		_, err := CanonicalizeExactWithout([]byte(`not json`), []string{ptr})
		var e *Error
		if err == nil || errors.As(err, &e) {
			t.Errorf("pointer %q: got %v, want a non-*Error error", ptr, err)
		}
	}
}

func TestCompareUTF16(t *testing.T) {
	samples := []string{"", "a", "ab", "b", "\u007f", "\u0080", "\u00ff", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffee", "\ufffd",
		"\U00010000", "\U0001F600", "\U0010FFFD", "a\U00010000", "a\ue000", "\u20ac", "\u20acx"}
	for _, a := range samples {
		for _, b := range samples {
			want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
			if got := compareUTF16([]byte(a), []byte(b)); sign(got) != want {
				t.Errorf("compareUTF16(%+q, %+q) = %d, want sign %d", a, b, got, want)
			}
		}
	}
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// A random JSON value model for the property tests. Numbers are decimals
// ±digits×10^exp, so equal values can be spelt many ways.
type jv struct {
	kind  kind
	neg   bool
	dig   string // number: significant digits, no leading zero ("0" for zero)
	exp   int
	str   string
	elems []jv
	names []string // object member names, unique
}

type gen struct{ r *rand.Rand }

var runePool = []rune{'a', 'b', 'Z', '0', ' ', '"', '\\', '/', '<', '~', 0, 0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x1f, 0x7f,
	0x80, 0xe9, 0xf6, 0x2028, 0x20ac, 0xd7ff, 0xe000, 0xfb33, 0xfffd, 0x10000, 0x1f600, 0x10fffd}

func (g gen) string() string {
	rs := make([]rune, g.r.IntN(6))
	for i := range rs {
		rs[i] = runePool[g.r.IntN(len(runePool))]
	}
	return string(rs)
}

func (g gen) value(depth int) jv {
	k := kind(g.r.IntN(10))
	switch {
	case depth == 0:
		k = kArray + kind(g.r.IntN(2))
	case k > kObject && depth < 3:
		k = kArray + k%2 // containers are 40% of values above depth 3
	case k > kObject || depth >= 3 && k >= kArray:
		k = kNumber + k%2
	}
	v := jv{kind: k}
	switch k {
	case kNumber:
		switch g.r.IntN(4) {
		case 0: // zero
			v.dig, v.neg = "0", g.r.IntN(2) == 0
		case 1: // around 2^53
			v.dig = strconv.FormatUint(1<<53-3+g.r.Uint64N(8), 10)
		default:
			v.dig, v.exp = randomDigits(g.r, 1+g.r.IntN(22)), g.r.IntN(60)-30
		}
		if v.dig != "0" {
			v.neg = g.r.IntN(3) == 0
		}
	case kString:
		v.str = g.string()
	case kArray:
		for range g.r.IntN(6) {
			v.elems = append(v.elems, g.value(depth+1))
		}
	case kObject:
		seen := map[string]bool{}
		for range g.r.IntN(7) {
			name := g.string()
			if !seen[name] {
				seen[name] = true
				v.names = append(v.names, name)
				v.elems = append(v.elems, g.value(depth+1))
			}
		}
	}
	return v
}

// spell writes v as JSON, choosing randomly among equivalent spellings:
// member order, whitespace, number notation and string escapes. With
// r == nil it writes the plainest spelling.
func spell(b *strings.Builder, v jv, r *rand.Rand) {
	ws := func() {
		if r != nil {
			b.WriteString([]string{"", "", " ", "\n", "\t", "\r\n  "}[r.IntN(6)])
		}
	}
	ws()
	switch v.kind {
	case kNull:
		b.WriteString("null")
	case kFalse:
		b.WriteString("false")
	case kTrue:
		b.WriteString("true")
	case kNumber:
		spellNumber(b, v, r)
	case kString:
		spellString(b, v.str, r)
	case kArray:
		b.WriteByte('[')
		for i, e := range v.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			spell(b, e, r)
		}
		ws()
		b.WriteByte(']')
	case kObject:
		b.WriteByte('{')
		order := make([]int, len(v.names))
		for i := range order {
			order[i] = i
		}
		if r != nil {
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		for i, m := range order {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			spellString(b, v.names[m], r)
			ws()
			b.WriteByte(':')
			spell(b, v.elems[m], r)
		}
		ws()
		b.WriteByte('}')
	}
	ws()
}

func spellNumber(b *strings.Builder, v jv, r *rand.Rand) {
	d, exp := v.dig, v.exp
	if v.neg {
		b.WriteByte('-')
	}
	if r == nil {
		fmt.Fprintf(b, "%se%d", d, exp)
		return
	}
	// Append zeros to the digits, then put the point anywhere: 1 -> 1.0,
	// 10e-1, 0.1e1, 0.00100e3 ...
	z := r.IntN(3)
	d += strings.Repeat("0", z)
	exp -= z
	k := r.IntN(len(d) + 1) // digits before the point
	if d == strings.Repeat("0", len(d)) {
		k = 1 // the integer part of zero is a single "0"
	}
	intPart, frac := d[:k], d[k:]
	exp += len(frac)
	if intPart == "" {
		intPart = "0"
		lead := r.IntN(3)
		frac = strings.Repeat("0", lead) + frac
		exp += lead
	}
	b.WriteString(intPart)
	if frac != "" {
		b.WriteString("." + frac)
	}
	if exp != 0 || r.IntN(3) == 0 {
		b.WriteString([]string{"e", "E"}[r.IntN(2)])
		if exp >= 0 {
			b.WriteString([]string{"", "+"}[r.IntN(2)])
		} else {
			b.WriteByte('-')
			exp = -exp
		}
		b.WriteString(strings.Repeat("0", r.IntN(2)) + strconv.Itoa(exp))
	}
}

func spellString(b *strings.Builder, s string, r *rand.Rand) {
	u := func(c uint16) {
		h := fmt.Sprintf("\\u%04x", c)
		if r != nil && r.IntN(2) == 0 {
			h = "\\u" + strings.ToUpper(h[2:])
		}
		b.WriteString(h)
	}
	b.WriteByte('"')
	for _, c := range s {
		short := map[rune]string{'"': `\"`, '\\': `\\`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '/': `\/`}[c]
		switch {
		case short != "" && c != '/' && (r == nil || r.IntN(2) == 0):
			b.WriteString(short)
		case c == '/' && r != nil && r.IntN(2) == 0:
			b.WriteString(short)
		case c < 0x20 || c == '"' || c == '\\' || r != nil && r.IntN(3) == 0:
			if c >= 0x10000 {
				hi, lo := utf16.EncodeRune(c)
				u(uint16(hi))
				u(uint16(lo))
			} else {
				u(uint16(c))
			}
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
}

// reference writes the expected canonical form of v with code independent of
// the package's parser: sorting through unicode/utf16 and math/big for exact
// numbers. Only the double formatting is shared (appendES6, which
// TestNumberVectors pins against RFC 8785 Appendix B).
func reference(b *strings.Builder, v jv, exact bool) {
	switch v.kind {
	case kNull, kFalse, kTrue:
		b.WriteString([]string{"null", "false", "true"}[v.kind])
	case kNumber:
		lit := fmt.Sprintf("%se%d", v.dig, v.exp)
		if v.neg {
			lit = "-" + lit
		}
		if exact {
			b.WriteString(exactReference(lit))
			return
		}
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			panic(err)
		}
		b.Write(appendES6(nil, f))
	case kString:
		b.WriteByte('"')
		for _, c := range v.str {
			switch c {
			case '"', '\\':
				b.WriteString(`\` + string(c))
			case '\b':
				b.WriteString(`\b`)
			case '\t':
				b.WriteString(`\t`)
			case '\n':
				b.WriteString(`\n`)
			case '\f':
				b.WriteString(`\f`)
			case '\r':
				b.WriteString(`\r`)
			default:
				if c < 0x20 {
					fmt.Fprintf(b, `\u%04x`, c)
				} else {
					b.WriteRune(c)
				}
			}
		}
		b.WriteByte('"')
	case kArray:
		b.WriteByte('[')
		for i, e := range v.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			reference(b, e, exact)
		}
		b.WriteByte(']')
	case kObject:
		order := make([]int, len(v.names))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(i, j int) int {
			return slices.Compare(utf16.Encode([]rune(v.names[i])), utf16.Encode([]rune(v.names[j])))
		})
		b.WriteByte('{')
		for i, m := range order {
			if i > 0 {
				b.WriteByte(',')
			}
			reference(b, jv{kind: kString, str: v.names[m]}, exact)
			b.WriteByte(':')
			reference(b, v.elems[m], exact)
		}
		b.WriteByte('}')
	}
}

func spelled(v jv, r *rand.Rand) []byte {
	var b strings.Builder
	spell(&b, v, r)
	return []byte(b.String())
}

// TestPropertySpellings: every spelling of a random value canonicalises to
// the same bytes, and those are the independently computed canonical form.
func TestPropertySpellings(t *testing.T) {
	r := rand.New(rand.NewPCG(8785, 7493))
	for i := range 3000 {
		v := gen{r}.value(0)
		for _, mode := range []struct {
			exact bool
			f     func([]byte) ([]byte, error)
		}{{false, Canonicalize}, {true, CanonicalizeExact}} {
			var want strings.Builder
			reference(&want, v, mode.exact)
			for range 4 {
				in := spelled(v, r)
				got, err := mode.f(in)
				if err != nil {
					t.Fatalf("case %d exact=%v: %v\ninput %s", i, mode.exact, err, in)
				}
				if string(got) != want.String() {
					t.Fatalf("case %d exact=%v:\ninput %s\ngot   %s\nwant  %s", i, mode.exact, in, got, want.String())
				}
			}
		}
	}
}

// TestPropertyTypesDiffer: changing the JSON type of any one value, e.g.
// 100 -> "100" or [x] -> x, always changes the canonical form.
func TestPropertyTypesDiffer(t *testing.T) {
	fixed := [][2]string{
		{`100`, `"100"`}, {`true`, `"true"`}, {`false`, `"false"`}, {`null`, `"null"`}, {`[1]`, `1`},
		{`{}`, `[]`}, {`0`, `false`}, {`null`, `""`}, {`[]`, `""`}, {`{"a":1}`, `{"a":"1"}`},
		{`{"a":null}`, `{}`}, {`[null]`, `[]`}, {`["a","b"]`, `["a,b"]`}, {`9007199254740993`, `"9007199254740993"`},
	}
	for _, p := range fixed {
		for _, f := range []func([]byte) ([]byte, error){Canonicalize, CanonicalizeExact} {
			a, b := mustCanon(t, f, p[0]), mustCanon(t, f, p[1])
			if a == b {
				t.Errorf("%s and %s both canonicalise to %s", p[0], p[1], a)
			}
		}
	}

	r := rand.New(rand.NewPCG(42, 100))
	for i := range 3000 {
		v := gen{r}.value(0)
		w := mutate(v, r)
		for _, f := range []func([]byte) ([]byte, error){Canonicalize, CanonicalizeExact} {
			a, err1 := f(spelled(v, r))
			b, err2 := f(spelled(w, r))
			if err1 != nil || err2 != nil {
				t.Fatalf("case %d: %v %v", i, err1, err2)
			}
			if bytes.Equal(a, b) {
				t.Fatalf("case %d: %s and %s canonicalise equally to %s", i, spelled(v, nil), spelled(w, nil), a)
			}
		}
	}
}

// mutate returns v with the JSON type of one randomly chosen value changed.
func mutate(v jv, r *rand.Rand) jv {
	if len(v.elems) > 0 && r.IntN(3) > 0 {
		i := r.IntN(len(v.elems))
		v.elems = slices.Clone(v.elems)
		v.elems[i] = mutate(v.elems[i], r)
		return v
	}
	switch v.kind {
	case kNull, kFalse, kTrue:
		return jv{kind: kString, str: []string{"null", "false", "true"}[v.kind]}
	case kNumber:
		var b strings.Builder
		reference(&b, v, true)
		return jv{kind: kString, str: b.String()}
	case kString:
		return jv{kind: kNumber, dig: "100"}
	case kArray:
		if len(v.elems) == 1 {
			return v.elems[0] // [x] -> x
		}
		return jv{kind: kObject, names: nil, elems: nil}
	default:
		return jv{kind: kArray, elems: v.elems} // object -> array of its values
	}
}

// fuzzSeeds are FuzzCanonicalize's seeds, which TestSameAsTree runs too.
var fuzzSeeds = []string{
	`{"b":[1,2.5,-0,1e21,"x\u0000"],"a":{"\ud83d\ude00":null,"\ufb33":true}}`,
	`9007199254740993`, `9.007199254740993e15`, `1e308`, `1e-400`, `-0.0`,
	`"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/"`,
	`[333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001]`,
	`{"a":1,"\u0061":2}`, `"\ud800"`, `[1,]`, "\"\xff\"", `[[[[[[]]]]]]`, ` {"":""} `,
	// Arrays of compact objects, which flatObject reads.
	`[{"sku":"P-1","qty":1,"price":19.99,"gift":false},{"sku":"P-2","qty":2,"price":1.5,"gift":true},"        "]`,
	`[{"abcdefgh2":1,"abcdefgh1":2},{"abcdefgh1":1,"abcdefgh2":2},{"b":"\u00e9","a":null},"        "]`,
}

func FuzzCanonicalize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		sameAsTree(t, src, false, nil)
		sameAsTree(t, src, true, nil)
		plain, perr := Canonicalize(src)
		exact, eerr := CanonicalizeExact(src)
		var e *Error
		if perr == nil && errors.As(eerr, &e) && strings.Contains(e.Reason, "1 MiB") {
			return // exact mode's expansion budget, plain mode has none
		}
		if (perr == nil) != (eerr == nil) {
			t.Fatalf("modes disagree on validity: %v / %v", perr, eerr)
		}
		if perr != nil {
			for _, err := range []error{perr, eerr} {
				var e *Error
				if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(src) || e.Reason == "" {
					t.Fatalf("bad error %#v", err)
				}
			}
			return
		}
		if !json.Valid(src) {
			t.Fatalf("accepted input encoding/json rejects: %q", src)
		}
		for _, c := range []struct {
			out []byte
			f   func([]byte) ([]byte, error)
		}{{plain, Canonicalize}, {exact, CanonicalizeExact}} {
			if !json.Valid(c.out) {
				t.Fatalf("output is not JSON: %q", c.out)
			}
			again, err := c.f(c.out)
			if err != nil || !bytes.Equal(again, c.out) {
				t.Fatalf("not idempotent: %q -> %q (%v)", c.out, again, err)
			}
			// Canonicalisation never changes the value as encoding/json
			// sees it (numbers as float64).
			var a, b any
			if json.Unmarshal(src, &a) != nil || json.Unmarshal(c.out, &b) != nil || !reflect.DeepEqual(a, b) {
				t.Fatalf("value changed: %q -> %q", src, c.out)
			}
		}
		// Exact output differs from plain only in digits plain rounds away.
		if p2, err := Canonicalize(exact); err != nil || !bytes.Equal(p2, plain) {
			t.Fatalf("Canonicalize(exact) = %q, want %q (%v)", p2, plain, err)
		}
	})
}

// orderBody is a realistic ~1 KB order payload.
var orderBody = []byte(`{
  "order_id": "ord_8f3b2c1a9e7d4f60",
  "idempotency_scope": "checkout",
  "customer": {"id": "cus_4242", "email": "jane.doe@example.com", "name": "Jane Doe", "tier": "gold", "marketing_opt_in": false},
  "currency": "EUR",
  "items": [
    {"sku": "SKU-1001", "name": "Wireless Mouse", "quantity": 2, "unit_price": 24.99, "tax_rate": 0.19, "tags": ["electronics", "accessories"]},
    {"sku": "SKU-2040", "name": "USB-C Hub (7-in-1)", "quantity": 1, "unit_price": 49.5, "tax_rate": 0.19, "tags": ["electronics"]},
    {"sku": "SKU-3307", "name": "Notebook \"A5\", dotted", "quantity": 5, "unit_price": 3.2, "tax_rate": 0.07, "tags": []}
  ],
  "shipping": {"method": "express", "cost": 7.5, "address": {"line1": "Hauptstraße 5", "line2": null, "city": "Berlin", "postal_code": "10115", "country": "DE"}},
  "discount": {"code": "SPRING24", "percent": 10, "applies_to": ["SKU-1001", "SKU-2040"]},
  "subtotal": 115.48,
  "total": 111.43,
  "amount_minor": 11143,
  "created_at": "2024-03-18T10:15:30.123Z",
  "metadata": {"source": "web", "campaign": null, "gift": true, "notes": "Leave at the door, ring twice", "ab_bucket": 17}
}`)

func BenchmarkCanonicalizeExact1KB(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(orderBody)))
	for b.Loop() {
		if _, err := CanonicalizeExact(orderBody); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCanonicalize1KB(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(orderBody)))
	for b.Loop() {
		if _, err := Canonicalize(orderBody); err != nil {
			b.Fatal(err)
		}
	}
}
