package jcs

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// flatPadding follows the objects of TestFlatObject and TestShapes, so
// that flatObject's eight-byte reads and 16-byte copies have room.
const flatPadding = "                "

// TestFlatObject holds flatObject to the objects it is meant to take, and
// to giving up, having changed nothing, on any other: parse must then see
// the object afresh, to canonicalise it or to report the error the tree
// does.
func TestFlatObject(t *testing.T) {
	long := func(n int) string {
		var b strings.Builder
		b.WriteByte('{')
		for k := range n {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"m` + string(rune('a'+(n-k)%26)) + string(rune('a'+k/26)) + `":` + "1")
		}
		return b.String() + "}"
	}
	for _, c := range []struct {
		obj  string
		took bool
	}{
		{`{"b":1,"a":2}`, true},
		{`{"a":1,"b":2}`, true}, // in order: nothing to write
		{`{"sku":"P-1000","qty":1,"price":19.99,"gift":false,"n":null,"t":true}`, true},
		{`{"a":"","b":"x","c":"long enough to need more than one read"}`, true},
		{"{\"b\":\"\u00e9 raw\",\"a\":\"\U0001F600\"}", true}, // UTF-8 is kept as sent
		{`{"b":-1,"a":0,"c":-0.5,"d":123456789012345}`, true},
		{`{"abcdefgh2":1,"abcdefgh1":2,"abcdefgh":3}`, true}, // keys tie: whole names decide
		{long(16), true},
		{long(17), false}, // wider than maxFlat
		{`{}`, false},
		{`{"a":1, "b":2}`, false},           // whitespace
		{`{"a" :1}`, false},                 // whitespace
		{`{"a\u0062":1}`, false},            // an escaped name
		{`{"é":1,"e":2}`, false},            // a name not ASCII
		{"{\"\ue000\":1}", false},           // U+E000 sorts after U+10000 in UTF-16
		{`{"":1}`, false},                   // an empty name has no key
		{`{"a":"\n"}`, false},               // an escape in a value
		{"{\"a\":\"\n\"}", false},           // a control character: an error
		{"{\"a\":\"\xff\"}", false},         // invalid UTF-8: an error
		{"{\"a\":\"\xef\xbf\xbf\"}", false}, // U+FFFF, a noncharacter
		{`{"a":1.0}`, false},                // not canonical
		{`{"a":1e2}`, false},
		{`{"a":01}`, false},
		{`{"a":-0}`, false},
		{`{"a":tru}`, false},
		{`{"a":nul,"b":1}`, false},
		{`{"a":{"b":1}}`, false}, // not flat
		{`{"a":[1]}`, false},
		{`{"a":1,"a":2}`, false},       // a duplicate: an error
		{`{"b":1,"a":2,"b":3}`, false}, // one sorting finds
		{`{"a":1,}`, false},
		{`{"a":1`, false},
		{`{"a":1]`, false},
		{`{"a"}`, false},
		{`{a:1}`, false},
	} {
		for _, pad := range []string{flatPadding, ""} {
			src := []byte(c.obj + pad)
			cn := &canonicaliser{src: src}
			out, end, run, ok := cn.flatObject([]byte("prefix"), 0, 0, false)
			// Without padding, names near the end cannot be read eight
			// bytes at a time, and the object may be left to parse.
			if ok != c.took && (pad != "" || ok) {
				t.Errorf("flatObject(%s) took it: %v, want %v", src, ok, c.took)
			}
			if !ok {
				if string(out) != "prefix" || end != 0 || run != 0 {
					t.Errorf("flatObject(%s) gave up but changed out to %q, end %d, run %d", src, out, end, run)
				}
			} else {
				got := string(append(out, src[run:end]...))
				want, err := treeCanonicalize(src[:end], true, nil)
				if err != nil || got != "prefix"+string(want) {
					t.Errorf("flatObject(%s) = %s; want prefix%s, %v", src, got, want, err)
				}
			}
			for _, doc := range []string{c.obj + pad, "[" + c.obj + "," + c.obj + "," + `"` + pad + `"]`} {
				sameAsTree(t, []byte(doc), false, nil)
				sameAsTree(t, []byte(doc), true, nil)
				sameAsTree(t, []byte(doc), true, []string{"/0/a", "/1"})
			}
		}
	}
}

// TestFlatSpaced holds flatObject to giving up on whitespace between
// tokens, and parse to trying no more objects that way, while the
// document is still canonicalised as the tree does.
func TestFlatSpaced(t *testing.T) {
	for _, c := range []struct {
		obj    string
		spaced bool
	}{
		{`{"a":1, "b":2}`, true},
		{`{"a" :1}`, true},
		{`{"a": 1}`, true},
		{`{ "a":1}`, true},
		{`{"a":1 ,"b":2}`, true},
		{"{\"a\":1,\n\"b\":2}", true},
		{`{"a":1.0,"b":2}`, false},
		{`{"a":{"b":1}}`, false},
		{`{"a\u0062":1}`, false},
	} {
		src := []byte(c.obj + flatPadding)
		cn := &canonicaliser{src: src}
		if _, _, _, ok := cn.flatObject(nil, 0, 0, false); ok || cn.spaced != c.spaced {
			t.Errorf("flatObject(%s): took it %v, spaced %v; want false, %v", src, ok, cn.spaced, c.spaced)
		}
		doc := []byte("[" + c.obj + `,{"b":1,"a":2},{"b":1,"a":2},"` + flatPadding + `"]`)
		sameAsTree(t, doc, true, nil)
	}
}

// TestFlatArray holds parse's loop over an array's flat objects to the
// tree: elements of other kinds between them, exclusion pointers into
// some, which the loop must leave to parse, and input cut short after one.
func TestFlatArray(t *testing.T) {
	for _, src := range []string{`[{"b":1,"a":true}`, `[{"b":1,"a":true},`, `[{"b":1,"a":true},{`, `[{"b":1,"a":true},{}`} {
		sameAsTree(t, []byte(src), true, nil)
	}
	elems := []string{`{"b":1,"a":2}`, `{"a":1,"b":2}`, `{"b":1,"c":2}`, `{"b":{"a":1},"a":2}`, `{"b":1, "a":2}`, `1`, `[]`, `{}`, `{"b":1,"b":2}`}
	r := rand.New(rand.NewPCG(19, 20))
	for range 3000 {
		var b strings.Builder
		b.WriteByte('[')
		n := 1 + r.IntN(6)
		for k := range n {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(elems[r.IntN(len(elems))])
		}
		b.WriteString(`,"` + flatPadding + `"]`)
		src := []byte(b.String())
		sameAsTree(t, src, true, nil)
		at := strconv.Itoa(r.IntN(n + 1))
		sameAsTree(t, src, true, [][]string{{"/" + at}, {"/" + at + "/a"}, {"/" + at + "/b/a"}}[r.IntN(3)])
	}
}
