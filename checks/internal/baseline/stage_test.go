package baseline

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/idemlint/idemlint/checks"
)

// --write-baseline records every finding and hides them all; --baseline
// then hides what it recorded, counts what no longer occurs, and both say
// so once the run is over.
func TestStageRecordsThenHides(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "baseline.json")
	a := finding("IDL107", filepath.Join(dir, "04-adapter.json"), "/idempotency_scope", 23)
	b := finding("IDL112", filepath.Join(dir, "04-adapter.json"), "/observability/log_fields", 30)

	write, err := NewStage(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := write.Process([]checks.Finding{a, b}, &checks.Result{}); len(got) != 0 {
		t.Errorf("--write-baseline left %v, want nothing", got)
	}
	var said bytes.Buffer
	if err := write.Finish(&said); err != nil {
		t.Fatal(err)
	}
	want := "idemlint: recorded 2 findings in baseline " + path + "\nidemlint: baseline " + path + " hid 2 findings\n"
	if said.String() != want {
		t.Errorf("--write-baseline said %q, want %q", said.String(), want)
	}

	c := finding("IDL110", filepath.Join(dir, "04-adapter.json"), "/idempotency_storage", 12)
	hide, err := NewStage(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := hide.Process([]checks.Finding{a, c}, &checks.Result{}); len(got) != 1 || got[0].Rule != c.Rule {
		t.Errorf("--baseline left %v, want the new finding only", got)
	}
	said.Reset()
	if err := hide.Finish(&said); err != nil {
		t.Fatal(err)
	}
	want = "idemlint: baseline " + path + " hid 1 finding; 1 entry no longer occurs (prune with --write-baseline " + path + ")\n"
	if said.String() != want {
		t.Errorf("--baseline said %q, want %q", said.String(), want)
	}

	if _, err := NewStage(filepath.Join(dir, "absent.json"), false); err == nil {
		t.Error("NewStage of a baseline that does not exist: no error")
	}
}
