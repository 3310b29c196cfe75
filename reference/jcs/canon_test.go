package jcs

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSkipPlain holds the eight-bytes-at-a-time scan to the byte table:
// every byte value at every position of every alignment, with plain bytes
// of every kind around it.
func TestSkipPlain(t *testing.T) {
	filler := []byte("aZ~ 0!\x7f#")
	for n := 0; n <= 20; n++ {
		buf := make([]byte, n)
		for i := range buf {
			buf[i] = filler[i%len(filler)]
		}
		for from := 0; from <= n; from++ {
			if got := skipPlain(buf, from); got != n {
				t.Fatalf("all plain, len %d from %d: got %d", n, from, got)
			}
		}
		for at := range n {
			for b := range 256 {
				buf[at] = byte(b)
				want := n
				if !plain[b] {
					want = at
				}
				if got := skipPlain(buf, 0); got != want {
					t.Fatalf("byte %#x at %d of %d: got %d, want %d", b, at, n, got, want)
				}
				// A second odd byte later must not hide the first.
				if at+1 < n {
					buf[n-1] = '"'
					if got := skipPlain(buf, 0); !plain[b] && got != at {
						t.Fatalf("byte %#x at %d before a quote: got %d", b, at, got)
					}
					buf[n-1] = filler[(n-1)%len(filler)]
				}
			}
			buf[at] = filler[at%len(filler)]
		}
	}
}

// sameAsTree fails t unless the canonicaliser and the tree-based one
// (treeCanonicalize) agree on src: the same output, or errors with the
// same reason at the same offset.
func sameAsTree(t *testing.T, src []byte, exact bool, exclude []string) {
	t.Helper()
	want, werr := treeCanonicalize(src, exact, exclude)
	var got []byte
	var err error
	switch {
	case exclude != nil:
		got, err = CanonicalizeExactWithout(src, exclude)
	case exact:
		got, err = CanonicalizeExact(src)
	default:
		got, err = Canonicalize(src)
	}
	var e, we *Error
	switch {
	case werr == nil && err == nil:
		if !bytes.Equal(got, want) {
			t.Fatalf("input %q (exact %v, exclude %q):\ngot  %s\nwant %s", src, exact, exclude, got, want)
		}
	case errors.As(err, &e) && errors.As(werr, &we):
		if *e != *we {
			t.Fatalf("input %q (exact %v): error %+v, want %+v", src, exact, *e, *we)
		}
	case err == nil || werr == nil || err.Error() != werr.Error():
		t.Fatalf("input %q (exact %v, exclude %q): got %q, %v; want %q, %v", src, exact, exclude, got, err, want, werr)
	}
	// Appending to a buffer gives the same bytes after what it held.
	if exact {
		prefix := []byte("prefix")
		app, aerr := AppendExactWithout(prefix, src, exclude)
		if (aerr == nil) != (err == nil) || !bytes.Equal(app[len(prefix):], got) || string(app[:len(prefix)]) != "prefix" {
			t.Fatalf("input %q: AppendExactWithout = %q, %v; want prefix+%q, %v", src, app, aerr, got, err)
		}
	}
}

// seeds returns the fuzz corpus of FuzzCanonicalize and its seeds.
func seeds(t *testing.T) [][]byte {
	t.Helper()
	out := [][]byte{}
	for _, s := range fuzzSeeds {
		out = append(out, []byte(s))
	}
	files, err := filepath.Glob("testdata/fuzz/FuzzCanonicalize/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fuzz corpus: %v", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		// "go test fuzz v1" and one []byte("...") line.
		_, lit, ok := strings.Cut(string(data), "\n[]byte(")
		if !ok {
			t.Fatalf("%s: not a []byte corpus entry", name)
		}
		src, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(lit), ")"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, []byte(src))
	}
	return out
}

// mutations returns src with one random edit: a byte replaced, inserted
// or removed, or the text cut short; most are no longer valid JSON.
func mutation(r *rand.Rand, src []byte) []byte {
	const alphabet = "{}[],:\"\\ \t\n0123456789.eE+-tfnulrsa\x00\x1f\x7f\xc3\xa9\xed\xa0\x80\xef\xbf\xbe\xf0\x9f\x98\x80"
	b := slices.Clone(src)
	at := r.IntN(len(b) + 1)
	c := alphabet[r.IntN(len(alphabet))]
	switch r.IntN(4) {
	case 0:
		if at < len(b) {
			b[at] = c
		}
	case 1:
		b = slices.Insert(b, at, c)
	case 2:
		if at < len(b) {
			b = slices.Delete(b, at, at+1)
		}
	default:
		b = b[:at]
	}
	return b
}

// pointers returns JSON Pointers into v, some resolving and some not, for
// the exclusion paths.
func pointers(r *rand.Rand, v jv) []string {
	var out []string
	var walk func(v jv, path string)
	walk = func(v jv, path string) {
		for k, e := range v.elems {
			tok := strconv.Itoa(k)
			if v.kind == kObject {
				tok = strings.NewReplacer("~", "~0", "/", "~1").Replace(v.names[k])
			}
			if r.IntN(4) == 0 {
				out = append(out, path+"/"+tok)
			}
			walk(e, path+"/"+tok)
		}
	}
	walk(v, "")
	if r.IntN(2) == 0 {
		out = append(out, "/absent", "/0/-", "/00")
	}
	return out
}

// TestSameAsTree holds the canonicaliser to the tree-based one on the
// fuzz corpus, on generated documents spelt in many ways, on mutations of
// both that reach the error paths, and with exclusion pointers.
func TestSameAsTree(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	inputs := seeds(t)
	for range 3000 {
		v := gen{r}.value(0)
		src := spelled(v, r)
		inputs = append(inputs, src)
		ptrs := pointers(r, v)
		sameAsTree(t, src, true, ptrs)
		sameAsTree(t, src, true, []string{})
		if len(ptrs) > 0 {
			sameAsTree(t, mutation(r, src), true, ptrs)
		}
	}
	// Wide objects, past the insertion sort, with names repeated up to
	// three times: which duplicate is reported must not change.
	for range 300 {
		var b strings.Builder
		b.WriteByte('{')
		for k := range 10 + r.IntN(30) {
			if k > 0 {
				b.WriteByte(',')
			}
			spellString(&b, []string{"a", "b", "c", "\u00e9", "é", "key", "k\u0065y", "longer name", "z"}[r.IntN(9)]+strconv.Itoa(r.IntN(12)), r)
			b.WriteString(":" + strconv.Itoa(k))
		}
		b.WriteByte('}')
		inputs = append(inputs, []byte(b.String()))
	}
	// Arrays of objects that mostly share one shape, as bodies do, with
	// near misses: a name changed, repeated, one more member, the order
	// changed.
	for range 500 {
		names := []string{}
		for range 1 + r.IntN(6) {
			names = append(names, gen{r}.string()+[]string{"", "x", "long member name", "\u00e9"}[r.IntN(4)])
		}
		var b strings.Builder
		b.WriteByte('[')
		for k := range 2 + r.IntN(5) {
			if k > 0 {
				b.WriteByte(',')
			}
			obj := slices.Clone(names)
			switch r.IntN(8) {
			case 0:
				obj[r.IntN(len(obj))] = gen{r}.string()
			case 1:
				obj = append(obj, obj[r.IntN(len(obj))])
			case 2:
				obj = append(obj, gen{r}.string())
			case 3:
				r.Shuffle(len(obj), func(i, j int) { obj[i], obj[j] = obj[j], obj[i] })
			}
			b.WriteByte('{')
			for m, name := range obj {
				if m > 0 {
					b.WriteByte(',')
				}
				spellString(&b, name, r)
				b.WriteString(":" + strconv.Itoa(m))
			}
			b.WriteByte('}')
		}
		b.WriteByte(']')
		inputs = append(inputs, []byte(b.String()))
	}
	for _, src := range inputs {
		for _, exact := range []bool{false, true} {
			sameAsTree(t, src, exact, nil)
			for range 10 {
				sameAsTree(t, mutation(r, src), exact, nil)
			}
		}
	}
}

// TestShortNumber holds the fast path for numbers to scanNumber and
// verbatim: whatever it takes must be a whole literal that is canonical as
// written, in both modes, and it must take the plain ones of up to 15
// significant digits.
func TestShortNumber(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for range 200_000 {
		var b strings.Builder
		for range 1 + r.IntN(24) {
			b.WriteByte("-0123456789.eE+x"[r.IntN(16)])
		}
		lit := b.String()
		if lit[0] != '-' && !isDigit(lit[0]) {
			continue
		}
		s := []byte(lit)
		var n number
		err := scanNumber(s, 0, &n)
		end := shortNumber(s, 0)
		if end >= 0 && (err != nil || n.end != end || !n.verbatim(s, false) || !n.verbatim(s, true)) {
			t.Fatalf("shortNumber(%q) = %d; scanNumber: end %d, %v, verbatim %v", lit, end, n.end, err, n.verbatim(s, false))
		}
		digits := strings.Count(strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(string(s[:n.end])), "0"), "") - 1
		if end < 0 && err == nil && !n.hasExp && n.verbatim(s, false) && digits <= 15 {
			t.Fatalf("shortNumber(%q) = -1, want %d", lit, n.end)
		}
	}
}

// FuzzCanonicalizeWithout holds exclusion to the tree-based
// canonicaliser: pointers is a list of JSON Pointers, one a line.
func FuzzCanonicalizeWithout(f *testing.F) {
	f.Add([]byte(`{"a":{"b":1,"c":[10,20,{"d":3}]},"x/y":5,"":8}`), "/a/c/0\n/a/c/2/d\n/x~1y")
	f.Add([]byte(`[0,1,[2,3]]`), "/2/0\n/0")
	f.Add([]byte(`{"b":{"x":1},"a":2}`), "/b/x\n/")
	f.Add([]byte(`[{"b":1,"a":2},{"b":1,"a":2},{"b":3,"a":4},"        "]`), "/1/a\n/2")
	f.Fuzz(func(t *testing.T, src []byte, pointers string) {
		sameAsTree(t, src, true, strings.Split(pointers, "\n"))
	})
}

// TestAppendString holds the run-copying AppendString to escaping every
// byte on its own.
func TestAppendString(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for range 20_000 {
		b := make([]byte, r.IntN(12))
		const alphabet = "ab\"\\\x00\x1f\n\x7f\xc3\xa9/ "
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		want := []byte{'"'}
		for _, c := range b {
			want = appendEscaped(want, c)
		}
		want = append(want, '"')
		if got := AppendString([]byte("x"), string(b)); string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %q, want %q", b, got[1:], want)
		}
	}
}

// TestPlainName holds plainName to skipPlain and nameKey: every length of
// plain name, ended by every kind of byte, at every distance from the end
// of the input.
func TestPlainName(t *testing.T) {
	const filler = "aZ~ 0!\x7f#bcdefghijklmnop"
	for n := 0; n <= 18; n++ {
		for _, end := range []string{`"`, `\`, "\x1f", "\xc3\xa9", "\xee\x80\x80", "\xf0\x90\x80\x80", ""} {
			for tail := 0; tail <= 9; tail++ {
				s := []byte(filler[:n] + end + strings.Repeat("x", tail))
				gotEnd, gotKey := plainName(s, 0)
				if want := skipPlain(s, 0); gotEnd != want {
					t.Fatalf("plainName(%q) ends at %d, skipPlain at %d", s, gotEnd, want)
				}
				if want := nameKey(s, 0, gotEnd); gotKey != want {
					t.Fatalf("plainName(%q) key %#x, nameKey %#x", s, gotKey, want)
				}
			}
		}
	}
}

// TestShapes holds the reuse of the last object's order (sameShape, and
// its form in flatObject) to the tree, on arrays of objects whose names
// are alike in the ways that matter: the same eight-byte keys and lengths
// with other bytes after them or in names that are not ASCII, names that
// sort differently in UTF-16 and UTF-8, escaped spellings of one name,
// duplicates, and with and without whitespace (parse or flatObject).
func TestShapes(t *testing.T) {
	names := [][]string{
		{"b", "abcdefgh2", "abcdefgh1"},
		{"b", "abcdefgh1", "abcdefgh2"}, // same keys and lengths as above
		{"b", "abcdefgh2", "abcdefgh1", "abcdefgh0"},
		{"b", "\u00e92", "\u00e91"}, // keys 0 (not ASCII), same lengths
		{"b", "\u00e91", "\u00e92"},
		{"z", "\ue000\ue000\ue000\ue000", "\U00010000\U00010000\U00010000"}, // 12 bytes each
		{"z", "\U00010000\U00010000\U00010000", "\ue000\ue000\ue000\ue000"},
		{"z", "a\ue000", "a\U00010000"},
		{"z", "a\U00010000", "a\ue000"},
		{"b", "a"},
		{"b", "\\u0061"}, // the same names, spelt otherwise
		{"\\u0062", "a"},
		{"b", "b"}, // a duplicate after the same first name
		{"a\\u0000", "a"},
		{"a", "a"}, // the same keys as above: lengths tell them apart
		{"b", "a", "a"},
		{"a", "b"},
		{"b", "a", "c"},
		{"c", "a", "b"},
	}
	r := rand.New(rand.NewPCG(17, 18))
	for range 2000 {
		var b strings.Builder
		sep := []string{"", " "}[r.IntN(2)]
		b.WriteString("[")
		for k := range 2 + r.IntN(4) {
			if k > 0 {
				b.WriteString("," + sep)
			}
			b.WriteString("{")
			for m, name := range names[r.IntN(len(names))] {
				if m > 0 {
					b.WriteString("," + sep)
				}
				b.WriteString(`"` + name + `":` + sep + `"v"`)
			}
			b.WriteString("}")
		}
		b.WriteString(`,"` + flatPadding + `"]`)
		src := []byte(b.String())
		sameAsTree(t, src, true, nil)
		sameAsTree(t, slices.Concat([]byte(`{"x":`), src, []byte(`,"a":0}`)), false, nil)
	}
}
