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
	if d, err := Open(Source{Mesh: IstioMesh}, &said); err != nil || d == nil || d.Mesh != IstioMesh || said.Len() != 0 {
		t.Errorf("Open of a mesh alone = %v, %v, said %q; want the mesh, nothing said", d, err, said.String())
	}
	missing := filepath.Join(t.TempDir(), "absent")
	if _, err := Open(Source{Paths: []string{missing}, Mesh: NoMesh}, &said); err == nil || !strings.HasPrefix(err.Error(), "as-built configuration: ") {
		t.Errorf("Open of a missing path = %v, want an as-built configuration error", err)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.yaml"), []byte("just: text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	said.Reset()
	d, err := Open(Source{Paths: []string{dir}, Mesh: NoMesh}, &said)
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
	if d, err = Open(Source{Paths: []string{dir}, Mesh: NoMesh}, &said); err != nil {
		t.Fatal(err)
	}
	opts := checks.DefaultOptions()
	Use(&opts, d)
	if len(opts.InputFindings) != 1 || opts.InputFindings[0].Rule != "IDL001" || opts.InputFindings[0].File != filepath.Join(dir, "broken.yaml") {
		t.Errorf("Use gave the run %v, want broken.yaml's IDL001", opts.InputFindings)
	}
}
