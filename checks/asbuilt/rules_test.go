package asbuilt_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/asbuilt"
	"github.com/idemlint/idemlint/fixtures"
)

var update = flag.Bool("update-rules", false, "rewrite the want section of testdata/rules/*.txtar")

// TestRules checks the boundary set fixtures/valid/orders-basic (web ->
// checkout-bff -> edge-gw -> orders-adapter; only the two inner edges
// retry, POST among their methods) against the manifests of each
// testdata/rules archive, and compares the as-built findings (IDL4xx),
// exactly, with its "want" section. An archive's "mesh" file, when there,
// names the mesh; its "set/NAME" files replace documents of the set.
func TestRules(t *testing.T) {
	archives, err := filepath.Glob("testdata/rules/*.txtar")
	if err != nil || len(archives) == 0 {
		t.Fatal("no archives", err)
	}
	base, err := fixtures.Lookup("valid/orders-basic")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range archives {
		t.Run(strings.TrimSuffix(filepath.Base(name), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(name)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := base.Materialize(filepath.Join(dir, "set")); err != nil {
				t.Fatal(err)
			}
			mesh := asbuilt.NoMesh
			var manifests []string
			wantAt := -1
			for i, f := range a.Files {
				switch f.Name {
				case "want":
					wantAt = i
					continue
				case "mesh":
					mesh = asbuilt.Mesh(strings.TrimSpace(string(f.Data)))
					continue
				}
				p := filepath.Join(dir, f.Name)
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(f.Name, "set/") { // "set/NAME" replaces a boundary document
					manifests = append(manifests, p)
				}
			}
			opts := checks.DefaultOptions()
			asbuilt.Use(&opts, &asbuilt.Deployment{Set: asbuilt.Read(manifests), Mesh: mesh})
			res, err := checks.Check([]string{filepath.Join(dir, "set")}, opts)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, f := range res.Findings {
				if !strings.HasPrefix(f.Rule, "IDL4") {
					continue
				}
				rel := func(p string) string { r, _ := filepath.Rel(dir, p); return filepath.ToSlash(r) }
				fmt.Fprintf(&b, "%s:%d:%d: %s %s\n", rel(f.File), f.Line, f.Column, f.Rule, f.Message)
				for _, r := range f.Related {
					fmt.Fprintf(&b, "  related %s:%d:%d: %s\n", rel(r.File), r.Line, r.Column, r.Message)
				}
			}
			got := b.String()
			if *update {
				if wantAt < 0 {
					a.Files = append(a.Files, txtar.File{Name: "want"})
					wantAt = len(a.Files) - 1
				}
				a.Files[wantAt].Data = []byte(got)
				if err := os.WriteFile(name, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if wantAt < 0 {
				t.Fatal("no want section; run with -update and review it")
			}
			if diff := cmp.Diff(string(a.Files[wantAt].Data), got); diff != "" {
				t.Errorf("findings differ (-want +got):\n%s", diff)
			}
		})
	}
}
