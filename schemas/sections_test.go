package schemas_test

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/fixtures/corpus"
	"github.com/idemlint/idemlint/schemas"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// TestValidatorEqualsValidate holds the section-cached validation to
// exactly what validating the whole document says: on every fixture
// document, on a generated corpus (whose flows repeat sections, so the
// cache is hit), on mutations of each that move, retype, drop or add
// members, and on second runs that are answered from the cache.
func TestValidatorEqualsValidate(t *testing.T) {
	var sources []string
	docs, err := fixtures.Documents()
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range docs {
		sources = append(sources, string(data))
	}
	dir := t.TempDir()
	if _, err := corpus.Generate(dir, corpus.Options{Flows: 60, Seed: 7, DefectRate: 0.5}); err != nil {
		t.Fatal(err)
	}
	generated, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*.json"))
	for _, p := range generated {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, string(data))
	}
	if len(sources) < 300 {
		t.Fatalf("only %d documents found", len(sources))
	}
	rng := rand.New(rand.NewSource(1))
	val := schemas.NewValidator()
	checked := 0
	for _, src := range sources {
		for _, variant := range append([]string{src}, mutations(rng, src)...) {
			root, _ := jsontree.Parse(variant)
			if root == nil {
				continue
			}
			want := schemas.Validate(root.Any())
			for run := range 2 { // the second run is answered from the cache
				if diff := cmp.Diff(want, val.Validate(root, variant)); diff != "" {
					t.Fatalf("run %d: Validator.Validate differs from Validate (-want +got):\n%s\ndocument:\n%s", run, diff, variant)
				}
			}
			checked++
		}
	}
	t.Logf("%d documents compared", checked)
}

// mutations returns variants of a document: each top-level member retyped,
// removed, or replaced by an unknown one, plus the members reordered and
// compacted onto one line (other raw text, same values).
func mutations(rng *rand.Rand, src string) []string {
	var doc map[string]json.RawMessage
	if json.Unmarshal([]byte(src), &doc) != nil {
		return nil
	}
	encode := func(m map[string]json.RawMessage) string {
		b, _ := json.Marshal(m)
		return string(b)
	}
	out := []string{encode(doc)}
	// Items of operations are validated one by one, cached by text and
	// moved to their index: retype, break and repeat items at every index.
	var ops []json.RawMessage
	if json.Unmarshal(doc["operations"], &ops) == nil && len(ops) > 0 {
		items := []string{`"x"`, `{}`, `{"operation_key": "a.b", "method": "FETCH", "path": "/a"}`,
			`{"operation_key": "A", "method": "POST", "path": "a", "bogus": 1}`,
			`{"operation_key": "a.b", "method": "POST", "path": "/a", "state_changing": "yes", "example": {"headers": {"bad header": 1}}}`}
		for i := range ops {
			m := map[string]json.RawMessage{}
			for k, v := range doc {
				m[k] = v
			}
			changed := append([]json.RawMessage(nil), ops...)
			changed[i] = json.RawMessage(items[rng.Intn(len(items))])
			changed = append(changed, changed[i]) // the same text at another index
			m["operations"], _ = json.Marshal(changed)
			out = append(out, encode(m))
		}
	}
	replacements := []string{`"x"`, `17`, `[]`, `{}`, `null`, `{"bogus": true}`, `[{"operation_key": "a.b", "method": "POST", "path": "/a"}]`}
	for name := range doc {
		m := map[string]json.RawMessage{}
		for k, v := range doc {
			m[k] = v
		}
		m[name] = json.RawMessage(replacements[rng.Intn(len(replacements))])
		out = append(out, encode(m))
		delete(m, name)
		out = append(out, encode(m))
		m[strings.ToUpper(name)] = doc[name]
		out = append(out, encode(m))
	}
	return out
}
