package schemas_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/fixtures/corpus"
	"github.com/idemlint/idemlint/schemas"
	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// The decoder judges each document against its kind's schema itself
// (boundary.Document.Conforms), and the check runs the validator only on
// a document that does not conform. These tests hold the two verdicts
// equal: a document the decoder passes and the schema fails would lose
// its IDL002 findings; the reverse would only cost time, but is held
// too, so the verdict stays exact for the reference engine.

// agree fails t when the decoder's verdict on src differs from the
// validator's.
func agree(t *testing.T, src string) {
	t.Helper()
	root, _ := jsontree.Parse(src)
	if root == nil {
		return
	}
	doc := boundary.Decode("doc.json", src, root)
	if !doc.Boundary {
		return // not a boundary document: the schema stage does not run
	}
	violations := schemas.Validate(root.Any())
	if (doc.Nonconforming == nil) != (len(violations) == 0) {
		t.Fatalf("decoder says nonconforming at %v, schema violations %v\ndocument:\n%s", doc.Nonconforming, violations, src)
	}
	// The decoder's place is that of a violation or of the object
	// lacking a member the violation names.
	if at := doc.Nonconforming; at != nil && !slices.ContainsFunc(violations, func(v schemas.Violation) bool {
		return v.Pointer == at.Pointer || strings.HasPrefix(v.Pointer, at.Pointer+"/")
	}) {
		t.Fatalf("decoder blames %q, schema violations %v\ndocument:\n%s", at.Pointer, violations, src)
	}
}

// verdictSeeds are every fixture document and a varied generated corpus
// with every kind of defect.
func verdictSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	seeds, err := fixtures.Documents()
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	if _, err := corpus.Generate(dir, corpus.Options{Flows: len(corpus.Defects), Seed: 5, DefectRate: 1}); err != nil {
		tb.Fatal(err)
	}
	generated, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*.json"))
	for _, p := range generated {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	return seeds
}

// TestDecoderVerdictEqualsSchema compares the verdicts on every seed and
// on 20 deep mutations of each (FuzzSchemaVerdict goes further): any value replaced by a value of another
// type or at a bound, any member dropped, an unknown or extension member
// added to any object.
func TestDecoderVerdictEqualsSchema(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	compared, conforming := 0, 0
	for _, seed := range verdictSeeds(t) {
		agree(t, string(seed))
		for _, variant := range deepMutations(rng, seed, 20) {
			agree(t, variant)
			compared++
			if root, _ := jsontree.Parse(variant); root != nil && boundary.Decode("doc.json", variant, root).Nonconforming == nil {
				conforming++
			}
		}
	}
	// Mutations that keep a document valid (an extension member, a value
	// swapped for another legal one) must be among them, or the test
	// could not tell a decoder that rejects everything.
	if compared < 5000 || conforming < compared/20 {
		t.Fatalf("%d variants compared, %d of them conforming: too few to hold the verdicts equal", compared, conforming)
	}
	t.Logf("%d variants compared, %d conforming", compared, conforming)
}

// FuzzSchemaVerdict holds the verdicts equal on arbitrary input.
func FuzzSchemaVerdict(f *testing.F) {
	for _, seed := range verdictSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src []byte) { agree(t, string(src)) })
}

// replacementValues are what a mutation puts in place of a value: each
// type, the bounds of the schemas' integers and their spellings, and
// strings each pattern or enum of the schemas accepts or refuses.
var replacementValues = []string{
	`null`, `true`, `false`, `{}`, `[]`, `[1]`, `[""]`, `["x-idempotency-key"]`, `[{}]`,
	`0`, `1`, `-1`, `1.0`, `1e2`, `2.5`, `99`, `100`, `599`, `600`, `8192`, `8193`, `100.0`, `5.99e2`,
	`86400000`, `86400001`, `1000000000`, `1000000001`, `9223372036854775808`, `1e400`, `-0`,
	`""`, `"x"`, `"X"`, `"x-y"`, `"bad header"`, `"/"`, `"/a~2"`, `"/a~0b"`, `"a"`, `"24h"`, `"24"`, `"h"`,
	`"header:x-tenant-id"`, `"header:"`, `"POST"`, `"post"`, `"GET"`, `"owner"`, `"reject"`, `"wait"`,
	`"stored_response"`, `"canonical_json"`, `"sha256"`, `"method"`, `"timeout"`, `"429"`, `"500"`,
	`"default"`, `"validate_only"`, `"none"`, `"adapter"`, `"idemlint.boundary/v1"`, `"a.b:c"`, `"A.b"`,
	`"canonical_form"`, `{"application/json":"canonical_json"}`, `{"*/*":"canonical_form","text/plain":"raw_bytes"}`,
	`{"Application/JSON":"canonical_json"}`, `{"application/json; charset=utf-8":"canonical_json"}`, `{"text/*":"raw_bytes"}`,
}

// deepMutations returns up to n variants of src, each one change at a
// value or member chosen at random over the whole document.
func deepMutations(rng *rand.Rand, src []byte, n int) []string {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return nil
	}
	var paths [][]any // each a path of member names and indexes
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		paths = append(paths, slices.Clone(path))
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				walk(c, append(path, k))
			}
		case []any:
			for i, c := range v {
				walk(c, append(path, i))
			}
		}
	}
	walk(doc, nil)
	slices.SortFunc(paths, func(a, b []any) int { return compareJSON(a, b) }) // map order is random
	var out []string
	for range n {
		mutated := clone(doc)
		path := paths[rng.Intn(len(paths))]
		parent, last := locate(mutated, path)
		switch op := rng.Intn(4); {
		case op == 0 && parent != nil: // drop the value
			switch p := parent.(type) {
			case map[string]any:
				delete(p, last.(string))
			case []any:
				setAt(mutated, path[:len(path)-1], slices.Delete(slices.Clone(p), last.(int), last.(int)+1))
			}
		case op == 1: // add a member to an object
			if obj, ok := valueAt(mutated, path).(map[string]any); ok {
				obj[[]string{"x-note", "bogus", "X-upper"}[rng.Intn(3)]] = "v"
				break
			}
			fallthrough
		default: // replace the value
			var v any
			d := json.NewDecoder(bytes.NewReader([]byte(replacementValues[rng.Intn(len(replacementValues))])))
			d.UseNumber()
			_ = d.Decode(&v)
			if len(path) == 0 {
				continue
			}
			setAt(mutated, path, v)
		}
		b, err := json.Marshal(mutated)
		if err == nil {
			out = append(out, string(b))
		}
	}
	return out
}

// compareJSON orders paths so that a seed's mutations do not depend on
// map iteration order.
func compareJSON(a, b []any) int {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Compare(x, y)
}

func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, c := range v {
			m[k] = clone(c)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, c := range v {
			l[i] = clone(c)
		}
		return l
	}
	return v
}

func valueAt(v any, path []any) any {
	for _, step := range path {
		switch s := step.(type) {
		case string:
			v = v.(map[string]any)[s]
		case int:
			v = v.([]any)[s]
		}
	}
	return v
}

// locate returns the container of the value at path and its last step;
// nil for the root.
func locate(v any, path []any) (any, any) {
	if len(path) == 0 {
		return nil, nil
	}
	return valueAt(v, path[:len(path)-1]), path[len(path)-1]
}

func setAt(root any, path []any, v any) {
	parent, last := locate(root, path)
	switch p := parent.(type) {
	case map[string]any:
		p[last.(string)] = v
	case []any:
		p[last.(int)] = v
	}
}

// TestDecoderKnowsEveryProperty adds each property the schemas declare,
// with a value its schema accepts, to a valid document of its kind, and
// holds the verdicts equal: a property added to a schema but not to the
// decoder's shapes fails here, before a policy using it is refused by
// the reference engine.
func TestDecoderKnowsEveryProperty(t *testing.T) {
	base, err := fixtures.Lookup(fixtures.Base)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"browser_to_bff": "01-browser-to-bff.json", "bff_to_gateway": "02-bff-to-gateway.json",
		"gateway_to_adapter": "03-gateway-to-adapter.json", "adapter": "04-adapter.json",
	}
	defs := map[string]any{}
	load := func(name string) map[string]any {
		src, ok := schemas.Source(name)
		if !ok {
			t.Fatalf("no schema %s", name)
		}
		var v map[string]any
		if err := json.Unmarshal(src, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for name, def := range load("common")["$defs"].(map[string]any) {
		defs[name] = def
	}
	// resolve follows $ref to a common definition (a kind's own $ref is
	// the conditional requirement beside its properties).
	resolve := func(s map[string]any) map[string]any {
		for {
			ref, ok := s["$ref"].(string)
			if _, props := s["properties"]; !ok || props {
				return s
			}
			s = defs[ref[strings.LastIndex(ref, "/")+1:]].(map[string]any)
		}
	}
	samples := map[string]any{ // a string each pattern of the schemas accepts
		`^/`: "/a", `^(/([^~]|~[01])*)+$`: "/a/b~1c", `^[0-9]+[smhdw]$`: "36h",
		"^header:[!#$%&'*+.^_`|~0-9A-Za-z-]+$": "header:x-org", `^[a-z0-9][a-z0-9._:-]*$`: "a.b:c",
		`^[a-z0-9][a-z0-9._-]{0,62}$`: "svc-1", "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$": "X-Trace",
	}
	var sample func(s map[string]any) any
	sample = func(s map[string]any) any {
		s = resolve(s)
		if c, ok := s["const"]; ok {
			return c
		}
		if e, ok := s["enum"].([]any); ok {
			return e[len(e)-1]
		}
		if alts, ok := s["anyOf"].([]any); ok {
			return sample(alts[0].(map[string]any))
		}
		switch s["type"] {
		case "string":
			if p, ok := s["pattern"].(string); ok {
				v, known := samples[p]
				if !known {
					t.Fatalf("no sample string for the pattern %q: add one", p)
				}
				return v
			}
			return "x"
		case "integer", "number":
			if m, ok := s["maximum"]; ok {
				return m
			}
			return 1
		case "boolean":
			return true
		case "array":
			if items, ok := s["items"].(map[string]any); ok {
				return []any{sample(items)}
			}
			return []any{}
		case "object":
			obj := map[string]any{}
			req, _ := s["required"].([]any)
			props, _ := s["properties"].(map[string]any)
			for _, r := range req {
				obj[r.(string)] = sample(props[r.(string)].(map[string]any))
			}
			return obj
		}
		return nil // an extension or an example body: any value
	}
	compared := 0
	for kind, file := range files {
		src, err := fs.ReadFile(base.Files, file)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(src, &doc); err != nil {
			t.Fatal(err)
		}
		// walk adds every property of the object schema s at path (in a
		// copy of doc each), then descends into objects and items.
		var walk func(s map[string]any, path []any)
		walk = func(s map[string]any, path []any) {
			s = resolve(s)
			if items, ok := s["items"].(map[string]any); ok {
				walk(items, append(path, 0))
			}
			props, _ := s["properties"].(map[string]any)
			for name, p := range props {
				variant := clone(doc).(map[string]any)
				objectAt(t, variant, path)[name] = sample(p.(map[string]any))
				b, _ := json.Marshal(variant)
				if vs := schemas.Validate(mustAny(t, b)); len(vs) == 0 {
					compared++
				} else if testing.Verbose() {
					t.Logf("%s %v/%s: %v", kind, path, name, vs)
				}
				agree(t, string(b))
				if len(path) < 4 {
					// The base gains the member (an object with its
					// required members) so that its own members are added
					// to a valid document.
					if parent := objectAt(t, doc, path); parent[name] == nil {
						parent[name] = sample(p.(map[string]any))
					}
					walk(p.(map[string]any), append(slices.Clone(path), name))
				}
			}
		}
		walk(load(kind), nil)
	}
	if compared < 150 {
		t.Fatalf("only %d variants with one more property were valid: the test no longer covers the schemas", compared)
	}
	t.Logf("%d valid variants compared", compared)
}

// objectAt returns the object at path in doc, taking the first item of
// each array on the way.
func objectAt(t *testing.T, doc map[string]any, path []any) map[string]any {
	t.Helper()
	at := doc
	for _, step := range path {
		name, ok := step.(string)
		if !ok {
			continue // an item: the member before it went to the first
		}
		next := at[name]
		if list, ok := next.([]any); ok && len(list) > 0 {
			next = list[0]
		}
		obj, ok := next.(map[string]any)
		if !ok {
			t.Fatalf("no object at %v", path)
		}
		at = obj
	}
	return at
}

func mustAny(t *testing.T, b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
