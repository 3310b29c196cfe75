package jsontree_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// TestParserReuseEqualsParse parses every fixture document, and broken,
// larger and smaller texts between them, with one Parser, and holds each
// tree and problem list equal to a fresh Parse: nothing of an earlier
// document may show through the reused memory.
func TestParserReuseEqualsParse(t *testing.T) {
	docs, err := fixtures.Documents()
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{`{"a":[1,{"b":"x\n"}],"c":{}}`, `{"a":1,"a":[true]}`, `{"a":`, `[]`, "\uFEFF{\"z\":null}", `{}`, `{"v":[` + strings.Repeat(`1,`, 3000) + `1]}`}
	for _, d := range docs {
		texts = append(texts, string(d), texts[len(texts)%7])
	}
	var p jsontree.Parser
	for i, src := range texts {
		gotRoot, gotProblems := p.Parse(src)
		wantRoot, wantProblems := jsontree.Parse(src)
		if diff := cmp.Diff(wantProblems, gotProblems); diff != "" {
			t.Fatalf("text %d: problems differ (-Parse +Parser.Parse):\n%s", i, diff)
		}
		if diff := cmp.Diff(describeTree(wantRoot), describeTree(gotRoot)); diff != "" {
			t.Fatalf("text %d: trees differ (-Parse +Parser.Parse):\n%s", i, diff)
		}
	}
}

// describeTree lists every node of a tree with its pointer, offset, kind
// and scalar value, in document order.
func describeTree(n *jsontree.Node) []string {
	if n == nil {
		return nil
	}
	out := []string{fmt.Sprintf("%q @%d %v %q %v members=%d items=%d", n.Pointer(), n.Offset, n.Kind, n.Text, n.True, len(n.Members), len(n.Items))}
	for _, m := range n.Members {
		out = append(out, fmt.Sprintf("key %q @%d", m.Key, m.KeyOffset))
		out = append(out, describeTree(m.Value)...)
	}
	for _, it := range n.Items {
		out = append(out, describeTree(it)...)
	}
	return out
}
