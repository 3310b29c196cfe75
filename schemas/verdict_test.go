package schemas_test

import (
	"bytes"
	"encoding/json"
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
// on deep mutations of each: any value replaced by a value of another
// type or at a bound, any member dropped, an unknown or extension member
// added to any object.
func TestDecoderVerdictEqualsSchema(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	compared, conforming := 0, 0
	for _, seed := range verdictSeeds(t) {
		agree(t, string(seed))
		for _, variant := range deepMutations(rng, seed, 40) {
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
	if compared < 10000 || conforming < compared/20 {
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

// TestDecoderKnowsEverySchemaMember adds each member name any schema
// declares, with values of several types, to every object of the shipped
// valid documents, and compares the verdicts: a field added to a schema
// but not to the decoder's shape would make the engine refuse every
// policy declaring it, and random mutations reach one object and one name
// together too rarely to notice.
func TestDecoderKnowsEverySchemaMember(t *testing.T) {
	var names []string
	schemaFiles, _ := filepath.Glob("*.schema.json")
	for _, p := range schemaFiles {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var schema any
		if err := json.Unmarshal(data, &schema); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		names = append(names, declaredMembers(schema)...)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if !slices.Contains(names, "max_records") {
		t.Fatalf("no schema declares max_records: the schema files were not read (%v)", schemaFiles)
	}
	// One flow with its adapter apart and one embedding it: every object
	// of every kind, without the other valid sets' repetitions of them.
	docs, _ := filepath.Glob(filepath.Join("..", "fixtures", "valid", "orders-basic", "*.json"))
	embedded, _ := filepath.Glob(filepath.Join("..", "fixtures", "valid", "embedded-adapter-policy", "*.json"))
	docs = append(docs, embedded...)
	if len(docs) == 0 {
		t.Fatal("no shipped valid documents found")
	}
	// An empty array is a valid list of any kind: a list member the
	// shape lacks is told apart only by it.
	values := []any{json.Number("1"), "x", true, []any{}}
	for _, p := range docs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var objects [][]any
		var walk func(v any, path []any)
		walk = func(v any, path []any) {
			switch v := v.(type) {
			case map[string]any:
				objects = append(objects, slices.Clone(path))
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
		for _, at := range objects {
			for _, name := range names {
				for _, value := range values {
					mutated := clone(doc)
					obj := valueAt(mutated, at).(map[string]any)
					if _, declared := obj[name]; declared {
						continue
					}
					obj[name] = value
					b, err := json.Marshal(mutated)
					if err != nil {
						t.Fatal(err)
					}
					agree(t, string(b))
				}
			}
		}
	}
}

// declaredMembers lists the member names of every "properties" object in
// a schema, at any depth.
func declaredMembers(schema any) []string {
	var out []string
	switch s := schema.(type) {
	case map[string]any:
		if props, ok := s["properties"].(map[string]any); ok {
			for name := range props {
				out = append(out, name)
			}
		}
		for _, c := range s {
			out = append(out, declaredMembers(c)...)
		}
	case []any:
		for _, c := range s {
			out = append(out, declaredMembers(c)...)
		}
	}
	return out
}
