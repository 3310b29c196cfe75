package baseline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/checks"
)

func finding(rule, file, pointer string, line int) checks.Finding {
	return checks.Finding{Rule: rule, Severity: checks.Error, File: file, Line: line, Column: 1, Pointer: pointer, Message: rule + " message"}
}

func TestRecordSaveLoadFilter(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	if err := os.Mkdir(set, 0o755); err != nil {
		t.Fatal(err)
	}
	today := []checks.Finding{
		finding("IDL107", filepath.Join(set, "04-adapter.json"), "/idempotency_scope", 23),
		finding("IDL112", filepath.Join(set, "04-adapter.json"), "/observability/log_fields", 30),
		finding("IDL112", filepath.Join(set, "04-adapter.json"), "/observability/log_fields", 30),
	}
	b, err := New(filepath.Join(dir, "baseline.json"))
	if err != nil {
		t.Fatal(err)
	}
	b.Record(today)
	if err := b.Save(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(b.Path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("saved baseline has mode %v, want 0644", info.Mode())
	}
	loaded, err := Load(b.Path)
	if err != nil {
		t.Fatal(err)
	}
	if got := loaded.Entries[0].File; got != "set/04-adapter.json" {
		t.Errorf("entry file = %q, want it relative to the baseline's directory", got)
	}

	// Lines moved, one IDL112 duplicate fixed, one new finding.
	later := []checks.Finding{
		finding("IDL107", filepath.Join(set, "04-adapter.json"), "/idempotency_scope", 40),
		finding("IDL112", filepath.Join(set, "04-adapter.json"), "/observability/log_fields", 47),
		finding("IDL112", filepath.Join(set, "01-browser-to-bff.json"), "/observability/log_fields", 3),
	}
	out := loaded.Filter(later)
	if out.Hidden != 2 || out.Stale != 1 || len(out.New) != 1 || out.New[0].File != later[2].File {
		t.Errorf("Filter = %+v, want 2 hidden, 1 stale and the finding in 01-browser-to-bff.json new", out)
	}

	// Relative finding paths mean the same from another working directory.
	t.Chdir(set)
	out = loaded.Filter([]checks.Finding{finding("IDL107", "04-adapter.json", "/idempotency_scope", 1)})
	if out.Hidden != 1 {
		t.Errorf("from the set's directory, Filter = %+v, want the finding hidden", out)
	}
}

func TestLoadRejectsWhatIsNotABaseline(t *testing.T) {
	cases := map[string]string{
		"not JSON":            `{"idemlint_baseline": 1, "findings": [`,
		"unknown field":       `{"idemlint_baseline": 1, "findings": [], "extra": true}`,
		"other version":       `{"idemlint_baseline": 2, "findings": []}`,
		"no version":          `{"findings": []}`,
		"bad fingerprint":     `{"idemlint_baseline": 1, "findings": [{"fingerprint": "xyz", "rule": "IDL101", "file": "a.json", "pointer": "", "message": ""}]}`,
		"two objects":         `{"idemlint_baseline": 1, "findings": []} {}`,
		"findings not a list": `{"idemlint_baseline": 1, "findings": {}}`,
	}
	for name, text := range cases {
		path := filepath.Join(t.TempDir(), "baseline.json")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: Load error = %v, want one naming %s", name, err, path)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}
