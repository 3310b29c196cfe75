package jsontree_test

import (
	"testing"

	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// BenchmarkParseFixtures parses every distinct fixture document: the size
// and shape of real boundary files.
func BenchmarkParseFixtures(b *testing.B) {
	seeds, err := fixtures.Documents()
	if err != nil || len(seeds) == 0 {
		b.Fatalf("%d fixture documents, error %v", len(seeds), err)
	}
	var docs []string
	var size int64
	for _, d := range seeds {
		docs = append(docs, string(d))
		size += int64(len(d))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			jsontree.Parse(d)
		}
	}
}

// BenchmarkParseSmallValues parses one document of 200,000 small values,
// the shape that costs the most memory per byte.
func BenchmarkParseSmallValues(b *testing.B) {
	src := jsontree.SmallValues(200_000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if root, problems := jsontree.Parse(src); root == nil || len(problems) > 0 {
			b.Fatal(problems)
		}
	}
}
