package checks

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/checks/chain"
)

// CheckPaths reads each file as the walk meets it, and the walk meets "a/"
// before "a-b/", which sorts first: the run's documents and findings are
// still in the order of their paths, as if the files had been given
// sorted.
func TestCheckKeepsPathOrderWhateverTheWalkOrder(t *testing.T) {
	dir := t.TempDir()
	var sorted []string
	for _, sub := range []string{"a", "a-b"} {
		if err := keyNotLogged(t).Materialize(filepath.Join(dir, sub)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "broken.json"), []byte(`{"spec_version": `), 0o644); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			sorted = append(sorted, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(sorted)

	res, err := CheckPaths([]string{dir}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range res.Facts {
		paths = append(paths, f.Path)
	}
	docs := slices.DeleteFunc(slices.Clone(sorted), func(p string) bool { return strings.HasSuffix(p, "broken.json") })
	if diff := cmp.Diff(docs, paths); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	given := CheckFiles(sorted, DefaultOptions())
	if diff := cmp.Diff(given.Findings, res.Findings); diff != "" || len(res.Findings) == 0 {
		t.Errorf("findings against those of the files given sorted (-given +walked):\n%s", diff)
	}
	if !slices.EqualFunc(given.Facts, res.Facts, func(a, b *chain.Facts) bool { return a.Path == b.Path }) {
		t.Errorf("facts differ from those of the files given sorted")
	}
}
