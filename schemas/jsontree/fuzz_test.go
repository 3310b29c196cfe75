package jsontree_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// addFixtureSeeds seeds a fuzz target with every shipped fixture document,
// so mutations start from realistic boundary files.
func addFixtureSeeds(f *testing.F) {
	f.Helper()
	seeds, err := fixtures.Documents()
	if err != nil {
		f.Fatal(err)
	}
	for _, data := range seeds {
		f.Add(data)
	}
}

// FuzzParse checks that no input panics or hangs the parser, that what it
// accepts without complaint encoding/json accepts too, with equal values,
// and that the value limit stops the parse exactly one value past it.
func FuzzParse(f *testing.F) {
	addFixtureSeeds(f)
	for _, s := range []string{`{}`, `{"a":[1,{"b":null}]}`, "\uFEFF{}", `{"a":1,"a":2}`, `{"a":"\ud83d\ude00"}`, `{"a":1e400}`,
		// For the limit: the last value is a scalar, a container, a key's.
		`{"a":[[],{},"x",1,true,null]}`, `{"a":{"b":{"c":[]}}}`, `{"\u00e9~/":{"x":"\n"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		root, problems := jsontree.Parse(string(src))
		for _, p := range problems {
			if p.Offset < 0 || p.Offset > len(src) || p.Line < 1 || p.Column < 1 || p.Message == "" {
				t.Fatalf("bad problem %+v for input of %d bytes", p, len(src))
			}
		}
		if root == nil || len(problems) > 0 {
			return
		}
		if !json.Valid(src) {
			t.Fatalf("accepted input encoding/json rejects: %q", src)
		}
		dec := json.NewDecoder(bytes.NewReader(src))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, root.Any()); diff != "" {
			t.Fatalf("value differs from encoding/json (-want +got):\n%s", diff)
		}
		// AppendJSON writes the same value back, and ParseValue reads it.
		compact := root.AppendJSON(nil)
		again, problems := jsontree.ParseValue(string(compact))
		if len(problems) > 0 {
			t.Fatalf("AppendJSON wrote %q, which does not parse: %v", compact, problems)
		}
		if diff := cmp.Diff(want, again.Any()); diff != "" {
			t.Fatalf("AppendJSON changed the value (-want +got):\n%s", diff)
		}

		// Without duplicates, every value parsed is in the tree.
		n := countValues(root)
		if _, problems := jsontree.ParseWithLimit(string(src), n); len(problems) > 0 {
			t.Fatalf("a limit of %d values refuses a document of %d: %v", n, n, problems)
		}
		root, problems = jsontree.ParseWithLimit(string(src), n-1)
		if root != nil || len(problems) != 1 || !strings.HasPrefix(problems[0].Message, fmt.Sprintf("more than %d JSON values", n-1)) {
			t.Fatalf("a limit of %d values on a document of %d: root %v, problems %v", n-1, n, root != nil, problems)
		}
	})
}

func countValues(n *jsontree.Node) int {
	count := 1
	for _, it := range n.Items {
		count += countValues(it)
	}
	for _, m := range n.Members {
		count += countValues(m.Value)
	}
	return count
}
