package jsontree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkParseFixtures parses every shipped fixture document: the size
// and shape of real boundary files.
func BenchmarkParseFixtures(b *testing.B) {
	paths, _ := filepath.Glob("../../fixtures/*/*/*.json")
	more, _ := filepath.Glob("../../fixtures/rules/*/*/*.json")
	var docs []string
	var size int64
	for _, p := range append(paths, more...) {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, string(data))
		size += int64(len(data))
	}
	if len(docs) == 0 {
		b.Fatal("no fixtures found")
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			Parse(d)
		}
	}
}

// BenchmarkParseSmallValues parses one document of 200,000 small values,
// the shape that costs the most memory per byte.
func BenchmarkParseSmallValues(b *testing.B) {
	src := smallValues(200_000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if root, problems := Parse(src); root == nil || len(problems) > 0 {
			b.Fatal(problems)
		}
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
