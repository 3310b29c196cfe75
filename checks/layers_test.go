package checks_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayers holds the packages to their layers: the format core
// (schemas/...) imports nothing of ours above it; the core checks import
// no sub-package but the chain graph, and no JSON Schema, OpenAPI or YAML
// library; and so the reference engine, a net/http middleware, compiles
// no OpenAPI or YAML reader, and no JSON Schema library nor the
// golang.org/x/text it brings (the decoder's verdict is its schema check;
// the standard library's own vendored copy, vendor/golang.org/x/text,
// comes with net/http).
func TestLayers(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on the PATH")
	}
	deps := func(pkg string) []string {
		t.Helper()
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	const module = "github.com/idemlint/idemlint/"
	forbidden := func(pkg string, bad func(dep string) bool) {
		t.Helper()
		for _, d := range deps(pkg) {
			if bad(d) {
				t.Errorf("%s imports %s", pkg, d)
			}
		}
	}
	forbidden("../schemas/...", func(d string) bool {
		return strings.HasPrefix(d, module) && !strings.HasPrefix(d, module+"schemas")
	})
	library := func(d string) bool {
		return strings.Contains(d, "kin-openapi") || strings.Contains(d, "yaml")
	}
	forbidden(".", func(d string) bool {
		sub := strings.HasPrefix(d, module+"checks/") && d != module+"checks/chain"
		return library(d) || strings.Contains(d, "jsonschema") || sub
	})
	forbidden("../reference", func(d string) bool {
		return library(d) || strings.Contains(d, "jsonschema") || strings.HasPrefix(d, "golang.org/x/text")
	})
	// The run every command sets up sits above the checks and their
	// inputs, below the commands; the reference engine and conform never
	// need it.
	forbidden("./lint", func(d string) bool {
		return strings.HasPrefix(d, module+"reference") || strings.HasPrefix(d, module+"cmd")
	})
	// conform probes an adapter policy; reading .idemlint.json (and so
	// the as-built readers the configuration names) is its caller's.
	forbidden("../reference/conform", func(d string) bool {
		return library(d) || strings.Contains(d, "jsonschema") || d == module+"checks/config" || d == module+"checks/lint"
	})
}
