package asbuilt

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
	"go.yaml.in/yaml/v4/plugin/loaderlimits"
)

// libraryDocument is the one document the YAML library loads from doc,
// as parseDocuments loads it; false when it loads none, more or fails.
func libraryDocument(doc []byte) (*yaml.Node, bool) {
	loader, err := yaml.NewLoader(bytes.NewReader(doc), yaml.WithPlugin(loaderlimits.New(loaderlimits.DepthValue(maxDepth))))
	if err != nil {
		return nil, false
	}
	var n yaml.Node
	if loader.Load(&n) != nil {
		return nil, false
	}
	var more yaml.Node
	if loader.Load(&more) != io.EOF {
		return nil, false
	}
	return &n, true
}

// sameNode returns where a and b differ in what the readers use (all but
// comments), or "".
func sameNode(a, b *yaml.Node, at string) string {
	if a.Kind != b.Kind || a.Style != b.Style || a.Tag != b.Tag || a.Value != b.Value || a.Anchor != b.Anchor ||
		(a.Alias == nil) != (b.Alias == nil) || a.Line != b.Line || a.Column != b.Column || len(a.Content) != len(b.Content) {
		return fmt.Sprintf("%s: {kind %d style %d tag %s value %q at %d:%d, %d children} against {kind %d style %d tag %s value %q at %d:%d, %d children}",
			at, a.Kind, a.Style, a.Tag, a.Value, a.Line, a.Column, len(a.Content), b.Kind, b.Style, b.Tag, b.Value, b.Line, b.Column, len(b.Content))
	}
	for i := range a.Content {
		if d := sameNode(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", at, i)); d != "" {
			return d
		}
	}
	return ""
}

// checkSimple fails t when readSimple reads a document of data other
// than the library does.
func checkSimple(t *testing.T, data []byte) {
	t.Helper()
	for _, doc := range documents(data) {
		readSimple(doc, func(simple *yaml.Node) {
			full, ok := libraryDocument(doc)
			if !ok {
				t.Fatalf("readSimple reads %q, which the library does not load", doc)
			}
			if d := sameNode(simple, full, "document"); d != "" {
				t.Fatalf("readSimple reads %q otherwise than the library: %s", doc, d)
			}
		})
	}
}

// simple reports whether readSimple reads doc.
func simple(doc []byte) bool { return readSimple(doc, func(*yaml.Node) {}) }

// simpleCases are documents readSimple reads or leaves to the library.
var simpleCases = []struct {
	doc    string
	simple bool
}{
	{"a: 1\n", true},
	{"# Source: x\n\napiVersion: v1\nkind: Service\n", true},
	{"--- # c\na: 1\n", true},
	{"---\n# x\na:\n  # y\n  b: 1\n", true},
	{"key:\nnext: [a, {b: c}]\nlist:\n- a: 1\n  b:\n- x\nz: ~\n", true},
	{"a: # c\n  b: 1\nc: # d\ne: 'x'\nf: \"y z\"\n'g': [\"1\", '2']\n", true},
	{"- # c\n- x\n-\n  a: b\n", true},
	{"a:\n  - x\n  -   y: 1\n      z: 2\n", true},
	{"a: [ a , b ]\nb: [a,b]\nc: {a: 1,b: 2}\nd: {}\ne: []\nf: {x: []}\n", true},
	{"\n\n  a: 1\n  b: 2\n", true},
	{"a: 'it''s'\nb: 'x''''y''z'\nc: ''\nd: \"\"\n", true},
	{"a: x # c\n   # d\nb: y\n", true},
	{"a: 0.0.0.0\nb: 2s\nc: -0\nd: 1_000\ne: 0x1F\nf: 089\ng: 1e3\nh: .5\ni: +1\nj: -.inf\nk: .nan\nl: True\nm: yes\nn: 128Mi\no: -x\n", true},
	{"a: b c, d[0] {e}\n", true},
	{"a: 1\na: 2\n", true},
	{"- a:\n  - x\n- b\n", true},

	{"a: 2020-01-01\n", false}, // a timestamp, perhaps
	{"a: b\n  c\n", false},     // a value continued
	{"a: &x 1\nb: *x\n", false},
	{"a: !!str 1\n", false},
	{"a: |\n  x\n", false},
	{"<<: {a: 1}\n", false},
	{"a: \"x\\ny\"\n", false},
	{"a: \"x\n  y\"\n", false},
	{"a:\tb\n", false},
	{"a: b\r\n", false},
	{"a: é\n", false},
	{"{\"a\": 1,\n \"b\": 2}\n", false},
	{"a: [b,\n  c]\n", false},
	{"a: [b, c,]\n", false},
	{"a: {b}\n", false},
	{"a: {b: http://x}\n", false},
	{"a: b: c\n", false},
	{"a: - b\n", false},
	{"- - a\n", false},
	{"? a\n: b\n", false},
	{"a:\n  b\n", false},
	{"a:\n    b: 1\n  c: 2\n", false},
	{"a: 1\n- b\n", false},
	{"--- a\n", false},
	{"...\n", false},
	{"a: 1\n---\nb: 2\n", false},
	{"hello\n", false},
	{"# only a comment\n", false},
	{"a: \"x\" y\n", false},
	{"a: \"x\"# c\n", false},
	{"a : b\n", false},
	{"\"a\":b\n", false},
	{strings.Repeat("- ", 1) + strings.Repeat("[", 80) + strings.Repeat("]", 80) + "\n", false},
}

func TestReadSimple(t *testing.T) {
	for _, tt := range simpleCases {
		if ok := simple([]byte(tt.doc)); ok != tt.simple {
			t.Errorf("readSimple(%q) read it: %v, want %v", tt.doc, ok, tt.simple)
		}
		checkSimple(t, []byte(tt.doc))
	}
}

// TestReadSimpleReadsBenchmarks holds the plain subset to the routing
// documents the cost benchmarks read: a change that sends them to the
// library again shows here, not only in a figure.
func TestReadSimpleReadsBenchmarks(t *testing.T) {
	var files []string
	for i := range 2 * len(routes) * len(companions) {
		files = append(files, benchManifest(i))
	}
	for i := range declarative {
		files = append(files, fmt.Sprintf(declarative[i], i, i))
	}
	for _, data := range files {
		for _, doc := range documents([]byte(data)) {
			if v, _ := triage(doc); v != parseIt {
				continue
			}
			if !simple(doc) {
				t.Errorf("the library parses %q", doc)
			}
		}
		checkSimple(t, []byte(data))
	}
}

// FuzzSimpleYAML holds readSimple to the YAML library: every document it
// reads, the library loads into the same nodes.
func FuzzSimpleYAML(f *testing.F) {
	for _, tt := range simpleCases {
		f.Add([]byte(tt.doc))
	}
	addReaderManifests(f)
	addBenchManifests(f)
	for i := range declarative {
		f.Add([]byte(fmt.Sprintf(declarative[i], i, i)))
	}
	f.Fuzz(checkSimple)
}

// TestReadSimpleIsBounded: on a hostile document readSimple allocates
// no more than the library does (beside a copy of the document), and
// deep nesting goes to the library.
func TestReadSimpleIsBounded(t *testing.T) {
	allocated := func(parse func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		parse()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	for name, doc := range map[string]string{
		"colons": "kind: HTTPRoute\nx: " + strings.Repeat(":", 1<<17) + "\n",
		"blanks": "kind: HTTPRoute\n" + strings.Repeat("\n", 1<<17) + "x: [\n",
		"commas": "kind: HTTPRoute\nx: [" + strings.Repeat("a,", 1<<16) + "\n",
		"wide":   "kind: HTTPRoute\nx: [" + strings.Repeat("a,", 1<<16) + "a]\n",
		"nesting": "kind: HTTPRoute\n" + func() string {
			var b strings.Builder
			for i := range 1000 {
				b.WriteString(strings.Repeat(" ", i) + "a:\n")
			}
			return b.String()
		}(),
	} {
		var read bool
		simpleBytes := allocated(func() { read = simple([]byte(doc)) })
		library := allocated(func() { libraryDocument([]byte(doc)) })
		if read != (name == "wide") {
			t.Errorf("%s: read %v", name, read)
		}
		if simpleBytes > library+2*uint64(len(doc))+1<<16 {
			t.Errorf("%s: %d bytes allocated for a document of %d, the library %d", name, simpleBytes, len(doc), library)
		}
	}
}

// poisonReleasedNodes makes every node readSimple releases, until restore
// is called, a scalar "released" at line 999999, and drops it.
func poisonReleasedNodes() (restore func()) {
	was := releaseSimple
	releaseSimple = func(s *simpleSlabs, p *simpleParser) {
		nodes := s.nodes[:min(p.made, cap(s.nodes))]
		for i := range nodes {
			nodes[i] = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "released", Line: 999999, Column: 1}
		}
	}
	return func() { releaseSimple = was }
}
