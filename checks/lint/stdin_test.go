package lint

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/schemas/fileset"
)

// TestOversizedStdinIsAFinding: a document over the size limit on standard
// input gets the IDL001 finding a named file of the same bytes gets, not
// a usage error (exit 2), so "check -" in an editor or a pipe judges it
// like "check FILE".
func TestOversizedStdinIsAFinding(t *testing.T) {
	big := append([]byte(`{"spec_version": "idemlint.boundary/v1", "x-pad": "`), bytes.Repeat([]byte("a"), fileset.MaxFileSize)...)
	big = append(big, `"}`...)

	named := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(named, big, 0o644); err != nil {
		t.Fatal(err)
	}
	want := checks.CheckFiles([]string{named}, checks.Options{}).Findings
	if len(want) != 1 || want[0].Rule != "IDL001" {
		t.Fatalf("a named oversized file gave %+v, want one IDL001", want)
	}

	res, _, err := checkStdin(bytes.NewReader(big), named, checks.Options{})
	if err != nil {
		t.Fatalf("checkStdin: %v (an oversized document must be a finding)", err)
	}
	if diff := cmp.Diff(want, res.Findings); diff != "" {
		t.Errorf("findings on standard input differ from the named file's (-named +stdin):\n%s", diff)
	}
}
