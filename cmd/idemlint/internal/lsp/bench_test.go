package lsp

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/idemlint/idemlint/fixtures/corpus"
)

// BenchmarkRecheck is the server's work for one keystroke: the whole set
// checked again with one unsaved buffer overlaid, and diagnostics
// published. 250 flows (1,000 files, 10% defective) is a large
// workspace; the server is sequential, so this is the latency a user sees.
//
//	go test -run '^$' -bench Recheck -benchtime 10x ./cmd/idemlint/internal/lsp
func BenchmarkRecheck(b *testing.B) {
	dir := b.TempDir()
	if _, err := corpus.Generate(dir, corpus.Options{Flows: 250, Seed: 1, DefectRate: 0.1, Style: corpus.Uniform}); err != nil {
		b.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*", "*", "04-adapter.json"))
	if err != nil || len(files) == 0 {
		b.Fatalf("corpus: %v", err)
	}
	text, err := os.ReadFile(files[0])
	if err != nil {
		b.Fatal(err)
	}
	s := &server{conn: newConn(nil, io.Discard), opts: Options{Log: io.Discard}, open: map[string]*buffer{},
		published: map[string]bool{}, encoding: utf16, root: dir}
	s.open[files[0]] = &buffer{uri: uriOf(files[0]), text: string(text)}
	b.ResetTimer()
	for range b.N {
		if err := s.check(); err != nil {
			b.Fatal(err)
		}
	}
}
