package changed

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/fixtures"
)

// A chain finding is kept when any hop of its chain changed, even though it
// is located in a file that did not; a per-document finding only when its
// own file changed.
func TestFilterKeepsChainsThroughChangedFiles(t *testing.T) {
	set, err := fixtures.Lookup("rules/IDL202/adapter-inbound-drops-key")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := set.Materialize(dir); err != nil {
		t.Fatal(err)
	}
	res, err := checks.CheckPaths([]string{dir}, checks.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	adapter := filepath.Join(dir, "04-adapter.json")
	perDocument := checks.Finding{Rule: "IDL112", Severity: checks.Warning, File: adapter, Pointer: "/observability"}
	findings := append([]checks.Finding{perDocument}, res.Findings...)
	if len(res.Findings) != 1 || res.Findings[0].Chain == "" || res.Findings[0].File != adapter {
		t.Fatalf("fixture changed: want one chain finding in %s, got %+v", adapter, res.Findings)
	}

	browser := Set{resolve(filepath.Join(dir, "01-browser-to-bff.json")): true}
	got := Filter(findings, res.Facts, browser)
	if len(got) != 1 || got[0].Rule != "IDL202" {
		t.Errorf("with the browser edge changed: got %+v, want only the IDL202 chain finding", got)
	}

	if got := Filter(findings, res.Facts, Set{resolve(adapter): true}); len(got) != 2 {
		t.Errorf("with the adapter changed: got %d findings, want both", len(got))
	}
	unrelated := Set{resolve(filepath.Join(dir, "..", "elsewhere.json")): true}
	if got := Filter(findings, res.Facts, unrelated); len(got) != 0 {
		t.Errorf("with no file of the set changed: got %+v, want none", got)
	}
}

func TestSince(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: --new-from-rev needs it")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q")
	write("kept.json", "{}")
	write("edited.json", "{}")
	write("staged.json", "{}")
	write(".gitignore", "ignored.json\n")
	run("add", ".")
	run("commit", "-q", "-m", "base")
	write("edited.json", `{"a": 1}`)
	write("staged.json", `{"a": 1}`)
	run("add", "staged.json")
	write("untracked.json", "{}")
	write("ignored.json", "{}")

	set, err := Since(filepath.Join(dir), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"kept.json": false, "edited.json": true, "staged.json": true, "untracked.json": true, "ignored.json": false} {
		if got := set[resolve(filepath.Join(dir, name))]; got != want {
			t.Errorf("%s changed = %v, want %v", name, got, want)
		}
	}

	for _, rev := range []string{"no-such-rev", "--output=x", ""} {
		if _, err := Since(dir, rev); err == nil {
			t.Errorf("Since(%q) succeeded, want an error", rev)
		}
	}
	if _, err := Since(t.TempDir(), "HEAD"); err == nil {
		t.Error("Since outside a git work tree succeeded, want an error")
	}

	// The stage starts from the first checked path, a file here, and
	// says how many findings it hid.
	stage, err := NewStage(filepath.Join(dir, "kept.json"), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	kept := stage.Process([]checks.Finding{
		{Rule: "IDL107", File: filepath.Join(dir, "kept.json")},
		{Rule: "IDL107", File: filepath.Join(dir, "edited.json")},
	}, &checks.Result{})
	if len(kept) != 1 || kept[0].File != filepath.Join(dir, "edited.json") {
		t.Errorf("the stage kept %v, want the finding in edited.json", kept)
	}
	var said strings.Builder
	if err := stage.Finish(&said); err != nil {
		t.Fatal(err)
	}
	if want := "idemlint: 1 finding outside the files changed since HEAD not shown\n"; said.String() != want {
		t.Errorf("the stage said %q, want %q", said.String(), want)
	}
}
