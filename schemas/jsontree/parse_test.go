package jsontree

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// located is a problem as a user sees it.
type located struct {
	Line, Col int
	Pointer   string
	Message   string
}

func locate(ps []Problem) []located {
	var out []located
	for _, p := range ps {
		out = append(out, located{p.Line, p.Column, p.Pointer, p.Message})
	}
	return out
}

func TestParseProblems(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		wantRoot bool
		want     []located
	}{
		{"empty", "", false, []located{{1, 1, "", "file is empty: a boundary document is one JSON object"}}},
		{"only whitespace", " \n\t ", false, []located{{2, 3, "", "file is empty: a boundary document is one JSON object"}}},
		{"bom then object", "\uFEFF{}", true, []located{{1, 1, "", "file starts with a UTF-8 byte order mark; JSON text must not (RFC 8259, 8.1): remove it"}}},
		{"bom then garbage", "\uFEFF{,}", false, []located{
			{1, 1, "", "file starts with a UTF-8 byte order mark; JSON text must not (RFC 8259, 8.1): remove it"},
			{1, 3, "", "unexpected character ',', expected a double-quoted object key"},
		}},
		{"line comment", "{\n  // note\n  \"a\": 1\n}", false, []located{{2, 3, "", "comments are not allowed in JSON; remove it (put notes in an \"x-\" field)"}}},
		{"block comment after value", "{\"a\": 1 /* x */}", false, []located{{1, 9, "", "comments are not allowed in JSON; remove it (put notes in an \"x-\" field)"}}},
		{"comment after object", "{}\n// end", false, []located{{2, 1, "", "comments are not allowed in JSON; remove it (put notes in an \"x-\" field)"}}},
		{"trailing comma object", "{\"a\": 1,\n}", false, []located{{2, 1, "", "trailing comma before '}'; remove the comma"}}},
		{"trailing comma array", "{\"a\": [1, 2,]}", false, []located{{1, 13, "", "trailing comma before ']'; remove the comma"}}},
		{"trailing content", "{}\n{}", false, []located{{2, 1, "", "unexpected character '{' after the top-level object; a file holds exactly one JSON object"}}},
		{"top-level array", "[1]", false, []located{{1, 1, "", "top-level value is an array; a boundary document must be one JSON object"}}},
		{"top-level string", "\"x\"", false, []located{{1, 1, "", "top-level value is a string; a boundary document must be one JSON object"}}},
		{"duplicate key", "{\n  \"a\": 1,\n  \"a\": 2\n}", true, []located{{3, 3, "/a", "duplicate key \"a\" (first at line 2, column 3); JSON parsers disagree on which one wins: keep one"}}},
		{"nested duplicate", "{\"x\": [{\"k\": 1, \"k\": 1}]}", true, []located{{1, 17, "/x/0/k", "duplicate key \"k\" (first at line 1, column 9); JSON parsers disagree on which one wins: keep one"}}},
		{"duplicate via escape", "{\"a\": 1, \"\\u0061\": 2}", true, []located{{1, 10, "/a", "duplicate key \"a\" (first at line 1, column 2); JSON parsers disagree on which one wins: keep one"}}},
		// Found by FuzzParse: the first "a" is replaced by the second, so
		// the duplicate inside it must not need its parent to name it.
		{"duplicate inside a replaced duplicate", "{\"a\": {\"b\": 1, \"b\": 2}, \"a\": 3}", true, []located{
			{1, 16, "/a/b", "duplicate key \"b\" (first at line 1, column 8); JSON parsers disagree on which one wins: keep one"},
			{1, 25, "/a", "duplicate key \"a\" (first at line 1, column 2); JSON parsers disagree on which one wins: keep one"},
		}},
		{"case differs is no duplicate", "{\"a\": 1, \"A\": 2}", true, nil},
		{"single quotes", "{'a': 1}", false, []located{{1, 2, "", "object keys must be in double quotes, not single quotes"}}},
		{"missing colon", "{\"a\" 1}", false, []located{{1, 6, "", "unexpected character '1', expected ':' after object key \"a\""}}},
		{"missing comma", "{\"a\": 1 \"b\": 2}", false, []located{{1, 9, "", "unexpected character '\"', expected ',' or '}' after the value of \"a\""}}},
		{"unclosed object", "{\"a\": {\n", false, []located{{2, 1, "", "unexpected end of file, expected '}' to close the object at line 1, column 7"}}},
		{"leading zero", "{\"a\": 01}", false, []located{{1, 7, "", "numbers must not have leading zeros"}}},
		{"NaN", "{\"a\": NaN}", false, []located{{1, 7, "", "NaN and Infinity are not JSON numbers"}}},
		{"minus Infinity", "{\"a\": -Infinity}", false, []located{{1, 7, "", "NaN and Infinity are not JSON numbers"}}},
		{"bad fraction", "{\"a\": 1.}", false, []located{{1, 7, "", "invalid number: expected a digit after '.'"}}},
		{"bad literal", "{\"a\": tru}", false, []located{{1, 7, "", "invalid literal; expected true"}}},
		{"control char in string", "{\"a\": \"x\ty\"}", false, []located{{1, 9, "", "control character U+0009 must be escaped in a string"}}},
		{"invalid utf8", "{\"a\": \"\xff\"}", false, []located{{1, 8, "", "invalid UTF-8 byte 0xff in a string"}}},
		{"invalid utf8 outside string", "{\xff}", false, []located{{1, 2, "", "unexpected byte 0xff (not valid UTF-8), expected a double-quoted object key"}}},
		{"lone high surrogate", "{\"a\": \"\\ud800\"}", false, []located{{1, 8, "", "lone surrogate \\ud800 is not valid Unicode"}}},
		{"lone low surrogate", "{\"a\": \"\\udc00x\"}", false, []located{{1, 8, "", "lone surrogate \\udc00 is not valid Unicode"}}},
		{"bad escape", "{\"a\": \"\\q\"}", false, []located{{1, 8, "", "invalid escape sequence \\q in a string"}}},
		{"unterminated string", "{\"a\": \"abc", false, []located{{1, 7, "", "unterminated string: no closing '\"' before end of file"}}},
		{"too deep", "{\"a\":" + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "}", false, []located{{1, 1005, "", "nesting is deeper than 1000 levels"}}},
		{"valid", "{\"a\": [1, -2.5e3, true, false, null, \"\\u00e9\\ud83d\\ude00\"], \"b\": {}}", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, problems := Parse(tt.src)
			if (root != nil) != tt.wantRoot {
				t.Errorf("root = %v, want root: %v", root, tt.wantRoot)
			}
			if diff := cmp.Diff(tt.want, locate(problems)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTreeValuesAndPointers(t *testing.T) {
	src := `{
  "a/b": {"c~d": [10, "x\u00e9", {"e": null}]},
  "n": 2.0
}`
	root, problems := Parse(src)
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	e := root.Get("a/b").Get("c~d").Items[2].Get("e")
	if got, want := e.Pointer(), "/a~1b/c~0d/2/e"; got != want {
		t.Errorf("Pointer() = %q, want %q", got, want)
	}
	if got := root.Nearest("/a~1b/c~0d/2/e"); got != e {
		t.Errorf("Nearest(existing) = %v, want the node", got)
	}
	if got := root.Nearest("/a~1b/c~0d/7/zz"); got != root.Get("a/b").Get("c~d") {
		t.Errorf("Nearest(missing) should stop at the deepest existing node, got %v", got.Pointer())
	}
	line, col := NewPosition(src).At(e.Offset)
	if line != 2 || col != 40 {
		t.Errorf("position of e = %d:%d, want 2:40", line, col)
	}
	if v, ok := root.Get("n").Int(); !ok || v != 2 {
		t.Errorf("Int of 2.0 = %d, %v", v, ok)
	}
	if s := root.Get("a/b").Get("c~d").Items[1].Text; s != "xé" {
		t.Errorf("decoded string = %q", s)
	}
	var want any
	if err := json.Unmarshal([]byte(src), &want); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	if err := dec.Decode(&want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, root.Any()); diff != "" {
		t.Errorf("Any() differs from encoding/json (-want +got):\n%s", diff)
	}
}

func TestColumnsCountCodePoints(t *testing.T) {
	src := "{\"ü€😀\": x}"
	_, problems := Parse(src)
	got := locate(problems)
	if len(got) != 1 || got[0].Col != 9 {
		t.Fatalf("want the error at column 9 (code points, not bytes), got %+v", got)
	}
}

func TestLargeObjectDuplicatesStayLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 50000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(`":1`)
	}
	b.WriteString("}")
	root, problems := Parse(b.String())
	if root == nil {
		t.Fatal("no root")
	}
	// 7*26 distinct keys; every other occurrence is a duplicate.
	if got, want := len(root.Members), 7*26; got != want {
		t.Errorf("members = %d, want %d", got, want)
	}
	// Reports stop after maxDuplicateReports, with one line saying so.
	if got, want := len(problems), maxDuplicateReports+1; got != want {
		t.Errorf("duplicate problems = %d, want %d", got, want)
	}
}

// The value that crosses the limit is named by position and pointer, and
// the parse stops there: no tree is built for a file that cannot be one.
func TestValueLimit(t *testing.T) {
	tests := []struct {
		name string
		src  string
		max  int
		want []located
	}{
		{"at the limit", `{"a": [1, 2]}`, 4, nil},
		{"element", `{"a": [1, 2]}`, 3, []located{{1, 11, "/a/1", "more than 3 JSON values in one file; a boundary document holds a few hundred: split the file or remove the bulk data"}}},
		{"member", "{\"a\": 1,\n \"b~/\": {}}", 2, []located{{2, 9, "/b~0~1", "more than 2 JSON values in one file; a boundary document holds a few hundred: split the file or remove the bulk data"}}},
		{"escaped key", `{"\u00e9": {"x": null}}`, 2, []located{{1, 18, "/é/x", "more than 2 JSON values in one file; a boundary document holds a few hundred: split the file or remove the bulk data"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, problems := parse(tt.src, tt.max)
			if (root != nil) != (tt.want == nil) {
				t.Errorf("root = %v, want a root: %v", root, tt.want == nil)
			}
			if diff := cmp.Diff(tt.want, locate(problems)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// An 8 MiB file of small values holds twice MaxValues. Parsing it stops at
// the limit without building a tree, having allocated the scratch for
// MaxValues values as append grows it (about five times its final 64 MB in
// all, most of it garbage by then), not four million nodes of a tree (about
// 1.3 GB in all before the limit). Allocation, unlike time, is the same on
// every machine, so it can be asserted.
func TestEightMiBOfSmallValuesStopsAtTheLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 100 MB")
	}
	src := smallValues(4 << 20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	root, problems := Parse(src)
	runtime.ReadMemStats(&after)
	if root != nil {
		t.Error("a tree was built past the limit")
	}
	// {"v":[ holds two values before the array's elements start; the
	// element that crosses the limit is the (MaxValues-1)th, at index
	// MaxValues-2, written at byte 6 + 2*(MaxValues-2).
	want := []located{{1, 6 + 2*(MaxValues-2) + 1, fmt.Sprintf("/v/%d", MaxValues-2),
		"more than 2000000 JSON values in one file; a boundary document holds a few hundred: split the file or remove the bulk data"}}
	if diff := cmp.Diff(want, locate(problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	const limit = 512 << 20
	if got := after.TotalAlloc - before.TotalAlloc; got > limit {
		t.Errorf("parsing allocated %d MB, want at most %d MB", got>>20, limit>>20)
	}
}

// smallValues returns {"v":[0,1,...]} holding n values in all.
func smallValues(n int) string {
	var s strings.Builder
	s.Grow(2*n + 8)
	s.WriteString(`{"v":[`)
	for i := range n - 2 {
		if i > 0 {
			s.WriteByte(',')
		}
		s.WriteByte('0' + byte(i%10))
	}
	s.WriteString("]}")
	return s.String()
}

// ParseValue takes any top-level value; Parse only an object.
func TestParseValueTakesAnyValue(t *testing.T) {
	for _, src := range []string{`[1,"a\u0001\"\\"]`, `"x"`, `9007199254740993`, `null`, `{"a":[true]}`} {
		n, problems := ParseValue(src)
		if len(problems) > 0 {
			t.Errorf("ParseValue(%s): %v", src, problems)
			continue
		}
		if got := string(n.AppendJSON(nil)); got != src {
			t.Errorf("AppendJSON of %s = %s", src, got)
		}
	}
	if _, problems := Parse(`[1]`); len(problems) == 0 {
		t.Error("Parse took a top-level array")
	}
}
