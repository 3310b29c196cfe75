package checks_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/lint"
)

// An ordinary repository holds JSON that is no boundary document: check
// skips it (docs/check.md, Which files are checked) inside a walked directory, counting it, and judges what is
// named on the command line.

// otherJSON are files of an ordinary repository, none a boundary document.
var otherJSON = map[string]string{
	"tsconfig.json":         "{\n  // JSON with comments\n  \"compilerOptions\": {\"strict\": true,},\n}\n",
	"package.json":          `{"name": "web", "private": true}`,
	"data/list.json":        `[{"id": 1}, {"id": 2}]`,
	"data/count.json":       "42\n",
	"data/settings.json":    "{\n  /* an editor's settings */\n  \"editor.tabSize\": 2\n}\n",
	".vscode/settings.json": "{\n  // hidden, never walked\n}\n",
}

type located struct {
	Rule, File   string
	Line, Column int
	Message      string
}

func locate(root string, fs []checks.Finding) []located {
	out := []located{}
	for _, f := range fs {
		rel, _ := filepath.Rel(root, f.File)
		out = append(out, located{f.Rule, filepath.ToSlash(rel), f.Line, f.Column, f.Message})
	}
	return out
}

// repoWithSet is a temporary repository holding the orders-basic set under
// set/ and otherJSON.
func repoWithSet(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "set"), os.DirFS(filepath.Join("..", "fixtures", "valid", "orders-basic"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "set", "findings.golden")); err != nil {
		t.Fatal(err)
	}
	for name, text := range otherJSON {
		writeFile(t, filepath.Join(root, name), text)
	}
	return root
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWalkedNonBoundaryJSONIsSkippedAndCounted(t *testing.T) {
	root := repoWithSet(t)
	res, err := checks.CheckPaths([]string{root}, lint.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := locate(root, res.Findings); len(got) != 0 {
		t.Errorf("findings on a repository with a clean set: %v", got)
	}
	// tsconfig.json, package.json and data/*.json; .vscode is a dot-directory.
	if res.Files != 9 || res.Facts == nil || len(res.Facts) != 4 || res.NotBoundary != 5 || res.Unreadable != 0 {
		t.Errorf("files %d, documents %d, not boundary %d, unreadable %d; want 9, 4, 5, 0",
			res.Files, len(res.Facts), res.NotBoundary, res.Unreadable)
	}
}

func TestBrokenTextNamingAMarkerIsJudgedWhenWalked(t *testing.T) {
	root := repoWithSet(t)
	// A boundary document broken by a comment: its bytes name the markers.
	writeFile(t, filepath.Join(root, "set", "05-draft.json"), "{\n  \"spec_version\": \"idemlint.boundary/v1\", // draft\n}\n")
	// Not JSON, mentioning "boundary" as a string: judged too.
	writeFile(t, filepath.Join(root, "notes.json"), "{\"title\": \"boundary\",}\n")
	res, err := checks.CheckPaths([]string{root}, lint.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := []located{
		{"IDL001", "notes.json", 1, 22, "trailing comma before '}'; remove the comma"},
		{"IDL001", "set/05-draft.json", 2, 43, `comments are not allowed in JSON; remove it (put notes in an "x-" field)`},
	}
	if diff := cmp.Diff(want, locate(root, res.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if res.Unreadable != 2 || res.NotBoundary != 5 {
		t.Errorf("unreadable %d, not boundary %d; want 2, 5", res.Unreadable, res.NotBoundary)
	}
}

func TestNamedFileIsAlwaysJudged(t *testing.T) {
	root := repoWithSet(t)
	tsconfig := filepath.Join(root, "tsconfig.json")
	list := filepath.Join(root, "data", "list.json")
	// Named beside the directory that holds it: named wins.
	res, err := checks.CheckPaths([]string{root, tsconfig, list}, lint.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := []located{{"IDL001", "tsconfig.json", 2, 3, `comments are not allowed in JSON; remove it (put notes in an "x-" field)`}}
	if diff := cmp.Diff(want, locate(root, res.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	// A named JSON array is valid JSON and no object: skipped and counted.
	if res.Unreadable != 1 || res.NotBoundary != 4 {
		t.Errorf("unreadable %d, not boundary %d; want 1, 4", res.Unreadable, res.NotBoundary)
	}
}
