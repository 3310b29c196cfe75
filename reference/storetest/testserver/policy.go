package testserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// EditedPolicy writes the JSON policy at path, changed by edit, to a
// temporary file of t (on one line) and returns the file's path: the
// tests of serve and of its wiring start servers on variants of one
// policy.
func EditedPolicy(t testing.TB, path string, edit func(doc map[string]any)) string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(edited, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return edited
}
