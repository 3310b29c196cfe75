package asbuilt

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	d.Wait()
	if want := "idemlint: 0 as-built resources read, 1 skipped\n"; said.String() != want {
		t.Errorf("Open said %q, want %q", said.String(), want)
	}

	// A file that is no YAML: a supplied Deployment hands its IDL001
	// finding to the run.
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("kind: HTTPRoute\nspec: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err = Open(Source{Paths: []string{dir}, Mesh: NoMesh}, &said); err != nil {
		t.Fatal(err)
	}
	var given checks.PendingInput = d
	if got, unreadable := given.Findings(); len(got) != 1 || got[0].Rule != "IDL001" || got[0].File != filepath.Join(dir, "broken.yaml") || unreadable != 1 {
		t.Errorf("the Deployment gave the run %v and %d unreadable, want broken.yaml's IDL001, 1 unreadable", got, unreadable)
	}
}

// TestOpenBesideARun: a run handed a configuration Open is still reading
// waits for it, and holds the set to it as to one read before the run.
func TestOpenBesideARun(t *testing.T) {
	shop := filepath.Join("..", "..", "fixtures", "as-built", "shop")
	run := func(d *Deployment) []string {
		opts := checks.DefaultOptions()
		opts.Rules = slices.Concat(checks.Core, Rules)
		opts.Inputs = append(opts.Inputs, Config.Supply(d))
		res, err := checks.CheckPaths([]string{filepath.Join(shop, "boundaries")}, opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range res.Findings {
			got = append(got, fmt.Sprintf("%s %s:%d:%d", f.Rule, f.File, f.Line, f.Column))
		}
		return got
	}
	src := Source{Paths: []string{filepath.Join(shop, "broken")}, Mesh: IstioMesh}
	var said strings.Builder
	opened, err := Open(src, &said)
	if err != nil {
		t.Fatal(err)
	}
	got := run(opened)
	loaded, _, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	want := run(loaded)
	if !slices.ContainsFunc(want, func(f string) bool { return strings.HasPrefix(f, "IDL401 ") }) || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings beside the run:\n%s\nwant, as read before it:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.HasSuffix(said.String(), " skipped\n") {
		t.Errorf("Open said %q, want how many resources were read", said.String())
	}
}
