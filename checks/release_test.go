package checks_test

import (
	"testing"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/lint"
)

// CheckPaths keeps the facts of the documents it checked, not the documents:
// a set of tens of thousands of files would otherwise keep every
// document live until the end. Load, which graph and conform read, keeps
// both.
func TestCheckKeepsFactsNotDocuments(t *testing.T) {
	dir := fixtureSet(t, "rules/IDL201/misspelt-to-by-one-edit")
	res, err := checks.CheckPaths([]string{dir}, lint.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Facts) != 4 || res.Documents != nil || len(res.Sets) != 1 || len(res.Sets[0]) != 4 {
		t.Errorf("check: %d facts, %d documents, sets %v; want 4 facts in one set and no document", len(res.Facts), len(res.Documents), res.Sets)
	}
	loaded, err := checks.Load([]string{dir}, lint.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Facts) != 4 || len(loaded.Documents) != 4 {
		t.Errorf("load: %d facts, %d documents; want 4 of each", len(loaded.Facts), len(loaded.Documents))
	}
	for i, d := range loaded.Documents {
		if d.Path != loaded.Facts[i].Path || d.Path != res.Facts[i].Path {
			t.Errorf("document %d is %s, facts %s and %s; want one order", i, d.Path, loaded.Facts[i].Path, res.Facts[i].Path)
		}
	}
}
