package fileset

import (
	"os"
	"path/filepath"
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
	files, skipped, err := Collect([]string{root})
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
	files, _, err := Collect([]string{filepath.Join(root, "x", "b.txt"), a, root})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.json", "x/b.txt"}, rel(t, root, files)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestCollectMissingPathIsAnError(t *testing.T) {
	_, _, err := Collect([]string{filepath.Join(t.TempDir(), "nope")})
	if err == nil || !strings.HasSuffix(err.Error(), "nope: no such file or directory") {
		t.Fatalf("err = %v", err)
	}
}

func TestCollectFollowsSymlinksWithoutLooping(t *testing.T) {
	root := tree(t, "set/a.json", "other/b.json")
	// A loop back to the root, a second link to a walked directory, a link
	// to a directory outside, a link to a file, and a broken link.
	mustSymlink(t, root, filepath.Join(root, "set", "loop"))
	mustSymlink(t, filepath.Join(root, "set"), filepath.Join(root, "set", "again"))
	mustSymlink(t, filepath.Join(root, "other"), filepath.Join(root, "set", "linked-dir"))
	mustSymlink(t, filepath.Join(root, "other", "b.json"), filepath.Join(root, "set", "c.json"))
	mustSymlink(t, filepath.Join(root, "missing.json"), filepath.Join(root, "set", "broken.json"))
	files, skipped, err := Collect([]string{filepath.Join(root, "set")})
	if err != nil {
		t.Fatal(err)
	}
	// "other" is reached through linked-dir first, so the loop back to the
	// root finds nothing new.
	want := []string{"set/a.json", "set/c.json", "set/linked-dir/b.json"}
	if diff := cmp.Diff(want, rel(t, root, files)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if len(skipped) != 1 || filepath.Base(skipped[0].Path) != "broken.json" || !strings.Contains(skipped[0].Err.Error(), "broken symbolic link") {
		t.Errorf("skipped = %v, want the broken link", skipped)
	}
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
