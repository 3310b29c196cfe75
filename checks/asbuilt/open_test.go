package asbuilt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/checks"
)

func TestOpen(t *testing.T) {
	var said strings.Builder
	if d, err := Open(nil, "none", false, false, &said); d != nil || err != nil || said.Len() != 0 {
		t.Errorf("Open with nothing given = %v, %v, said %q; want nothing", d, err, said.String())
	}
	if d, err := Open(nil, "istio", true, false, &said); err != nil || d == nil || d.Mesh != IstioMesh {
		t.Errorf("Open with --mesh istio alone = %v, %v; want the mesh", d, err)
	}
	if _, err := Open(nil, "linkerd", true, false, &said); err == nil || err.Error() != `--mesh must be none or istio, got "linkerd"` {
		t.Errorf("Open with an unknown mesh = %v", err)
	}
	missing := filepath.Join(t.TempDir(), "absent")
	if _, err := Open([]string{missing}, "none", false, false, &said); err == nil || !strings.HasPrefix(err.Error(), "--as-built: ") {
		t.Errorf("Open of a missing path = %v, want an --as-built error", err)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.yaml"), []byte("just: text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	said.Reset()
	d, err := Open([]string{dir}, "none", false, false, &said)
	if err != nil || d == nil || d.Mesh != NoMesh {
		t.Fatalf("Open(dir) = %v, %v", d, err)
	}
	if want := "idemlint: 0 as-built resources read, 1 skipped\n"; said.String() != want {
		t.Errorf("Open said %q, want %q", said.String(), want)
	}

	// A file that is no YAML: Use hands its IDL001 finding to the run.
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("kind: HTTPRoute\nspec: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err = Open([]string{dir}, "none", false, false, &said); err != nil {
		t.Fatal(err)
	}
	opts := checks.DefaultOptions()
	Use(&opts, d)
	if len(opts.InputFindings) != 1 || opts.InputFindings[0].Rule != "IDL001" || opts.InputFindings[0].File != filepath.Join(dir, "broken.yaml") {
		t.Errorf("Use gave the run %v, want broken.yaml's IDL001", opts.InputFindings)
	}
}
