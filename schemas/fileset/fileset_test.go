package fileset

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree creates files (content "{}") and returns the root.
func tree(t *testing.T, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func rel(t *testing.T, root string, paths []string) []string {
	t.Helper()
	out := []string{}
	for _, p := range paths {
		r, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(r))
	}
	return out
}

func TestCollectWalksSortedSkippingDotEntries(t *testing.T) {
	root := tree(t, "b/2.json", "b/1.json", "a.json", "notes.md", ".git/x.json", ".idemlint.json", "c/.hidden.json", "c/d/e.json")
	files, skipped, err := Collect([]string{root}, Options{})
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	want := []string{"a.json", "b/1.json", "b/2.json", "c/d/e.json"}
	if diff := cmp.Diff(want, rel(t, root, files)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestCollectNamedFilesAndDuplicates(t *testing.T) {
	root := tree(t, "a.json", "x/b.txt")
	a := filepath.Join(root, "a.json")
	// A file named explicitly is taken whatever its extension, and paths
	// named twice (or also reached by a walk) are checked once.
	files, _, err := Collect([]string{filepath.Join(root, "x", "b.txt"), a, root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.json", "x/b.txt"}, rel(t, root, files)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestCollectMissingPathIsAnError(t *testing.T) {
	_, _, err := Collect([]string{filepath.Join(t.TempDir(), "nope")}, Options{})
	if err == nil || !strings.HasSuffix(err.Error(), "nope: no such file or directory") {
		t.Fatalf("err = %v", err)
	}
}

// CollectEach hands over each file the walk takes once, named or walked,
// whatever its order; a run that fails on a named path hands over none.
func TestCollectEachHandsOverEachFileOnce(t *testing.T) {
	root := tree(t, "b/2.json", "b/1.json", "a.json", "a-b.json", "x/c.txt", "notes.md")
	named := filepath.Join(root, "x", "c.txt")
	var found []string
	files, _, err := CollectEach([]string{root, named, filepath.Join(root, "a.json")}, Options{}, func(p string) { found = append(found, p) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a-b.json", "a.json", "b/1.json", "b/2.json", "x/c.txt"}
	if diff := cmp.Diff(want, rel(t, root, files)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	slices.Sort(found)
	if diff := cmp.Diff(want, rel(t, root, found)); diff != "" {
		t.Errorf("handed over (-want +got):\n%s", diff)
	}

	found = nil
	_, _, err = CollectEach([]string{named, root, filepath.Join(root, "nope")}, Options{}, func(p string) { found = append(found, p) })
	if err == nil || len(found) > 0 {
		t.Errorf("a missing named path: err %v, handed over %q", err, found)
	}
}

func TestCollectFollowsSymlinksInsideTheTreeWithoutLooping(t *testing.T) {
	root := tree(t, "set/a.json", "set/sub/b.json")
	// A loop back to the named directory, a second link to a walked
	// directory, a link to a file, and a broken link.
	mustSymlink(t, filepath.Join(root, "set"), filepath.Join(root, "set", "loop"))
	mustSymlink(t, filepath.Join(root, "set", "sub"), filepath.Join(root, "set", "again"))
	mustSymlink(t, filepath.Join("sub", "b.json"), filepath.Join(root, "set", "c.json"))
	mustSymlink(t, filepath.Join(root, "missing.json"), filepath.Join(root, "set", "broken.json"))
	files, skipped, err := Collect([]string{filepath.Join(root, "set")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// "sub" is reached through "again" first, so its own name finds
	// nothing new.
	want := []string{"set/a.json", "set/again/b.json", "set/c.json"}
	if diff := cmp.Diff(want, rel(t, root, files)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"set/broken.json: broken symbolic link: no such file or directory"}, describe(t, root, skipped)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}

// A link is followed only into the named paths and Options.Roots, unless
// Options.FollowSymlinks: otherwise a pull request could make a check on
// CI read any file of the runner.
func TestCollectReportsLinksLeavingTheTree(t *testing.T) {
	root := tree(t, "set/a.json", "other/b.json")
	mustSymlink(t, filepath.Join(root, "other"), filepath.Join(root, "set", "out"))
	mustSymlink(t, filepath.Join("..", "other", "b.json"), filepath.Join(root, "set", "x.json"))
	mustSymlink(t, root, filepath.Join(root, "set", "up"))
	set := filepath.Join(root, "set")
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	leaves := func(target string) string {
		return "symlink leaves the checked tree: " + filepath.Join(realRoot, target) + " is outside the paths checked; --follow-symlinks follows it"
	}
	tests := []struct {
		name        string
		opts        Options
		files, skip []string
	}{
		{"named paths only", Options{}, []string{"set/a.json"},
			[]string{"set/out: " + leaves("other"), "set/up: " + leaves(""), "set/x.json: " + leaves("other/b.json")}},
		{"a root besides", Options{Roots: []string{filepath.Join(root, "other")}}, []string{"set/a.json", "set/out/b.json", "set/x.json"},
			[]string{"set/up: " + leaves("")}},
		// The walk goes up and back into set, which it has walked: nothing
		// is taken twice.
		{"follow all", Options{FollowSymlinks: true}, []string{"set/a.json", "set/out/b.json", "set/x.json"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, skipped, err := Collect([]string{set}, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.files, rel(t, root, files)); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.skip, describe(t, root, skipped)); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

// A named path that is itself a link is the tree: links inside it that
// lead into its target stay inside.
func TestCollectNamedLinkIsInsideItself(t *testing.T) {
	root := tree(t, "real/a.json")
	mustSymlink(t, filepath.Join(root, "real", "a.json"), filepath.Join(root, "real", "b.json"))
	mustSymlink(t, filepath.Join(root, "real"), filepath.Join(root, "named"))
	files, skipped, err := Collect([]string{filepath.Join(root, "named")}, Options{})
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	if diff := cmp.Diff([]string{"named/a.json", "named/b.json"}, rel(t, root, files)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestCollectInclude(t *testing.T) {
	root := tree(t, "a.json", "b.boundary", "c/d.boundary", "c/e.txt")
	include := func(p string) bool { return strings.HasSuffix(p, ".boundary") }
	files, _, err := Collect([]string{root}, Options{Include: include})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b.boundary", "c/d.boundary"}, rel(t, root, files)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

// describe renders skipped paths relative to root, with their reason.
func describe(t *testing.T, root string, skipped []Skipped) []string {
	t.Helper()
	var out []string
	for _, s := range skipped {
		out = append(out, rel(t, root, []string{s.Path})[0]+": "+s.Err.Error())
	}
	return out
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

func TestReadLimitsSize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: large on paper, cheap on disk.
	if err := f.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Read(p)
	if err == nil || err.Error() != "file is larger than the 8 MiB limit for a boundary document" {
		t.Fatalf("err = %v", err)
	}
	if _, err := Read(filepath.Dir(p)); err == nil || err.Error() != "is a directory" {
		t.Fatalf("reading a directory: err = %v", err)
	}
}
