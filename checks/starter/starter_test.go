package starter

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/checks/openapi"
)

// The starter set passes check, each document names its kind's schema
// under SchemaDir, and the set carries those schemas.
func TestNewIsACleanSetWithItsSchemas(t *testing.T) {
	set, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := set.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 8 || files[0] != filepath.Join(dir, ".schemas", "adapter.schema.json") || files[4] != filepath.Join(dir, "01-browser-to-bff.json") {
		t.Errorf("Write created %v, want the four schemas, then the four documents", files)
	}
	adapter, err := os.ReadFile(filepath.Join(dir, "04-adapter.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"$schema\": \"./.schemas/adapter.schema.json\","; !strings.HasPrefix(string(adapter), want) {
		t.Errorf("04-adapter.json starts %.60q, want %q", adapter, want)
	}
	res, err := checks.Check([]string{dir}, lint.DefaultOptions())
	if err != nil || len(res.Findings) != 0 || len(res.Facts) != 4 {
		t.Errorf("check of the starter set: %v, %d documents, findings %v; want 4 clean documents", err, len(res.Facts), res.Findings)
	}
}

func TestWriteNeverOverwrites(t *testing.T) {
	set, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	taken := filepath.Join(dir, "04-adapter.json")
	if err := os.WriteFile(taken, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = set.Write(dir)
	if want := "refusing to overwrite " + taken + "; nothing written"; err == nil || err.Error() != want {
		t.Errorf("Write = %v, want %s", err, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("Write left %d entries, want only the file that was there", len(entries))
	}
}

// A flow per tag, each in its directory, whose documents name the schemas
// one level up.
func TestNewFromOpenAPI(t *testing.T) {
	api, err := openapi.Load(writeSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	set, err := New(api)
	if err != nil {
		t.Fatal(err)
	}
	doc, ok := set.Files["orders/04-adapter.json"]
	if !ok || !strings.Contains(string(doc.Data), `"$schema": "../.schemas/adapter.schema.json"`) {
		t.Errorf("orders/04-adapter.json: %v, want it naming ../.schemas/adapter.schema.json; files %v", ok, keys(set))
	}
	// The description declares no key header for its one write.
	if len(set.KeyGaps) != 1 {
		t.Errorf("KeyGaps = %v, want the one operation", set.KeyGaps)
	}
}

// Init says what it created and what to run next; into a directory that
// holds the set already it writes and says nothing.
func TestInit(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	if err := Init(dir, "", &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != 9 || lines[4] != "created "+filepath.Join(dir, "01-browser-to-bff.json") || stderr.Len() != 0 {
		t.Errorf("Init said %q on stdout, %q on stderr; want eight files created", lines, stderr.String())
	}
	if want := "next: rename the components and operations, then run: idemlint check " + dir; lines[len(lines)-1] != want {
		t.Errorf("Init ends %q, want %q", lines[len(lines)-1], want)
	}
	stdout.Reset()
	if err := Init(dir, "", &stdout, &stderr); err == nil || !strings.HasPrefix(err.Error(), "refusing to overwrite ") || stdout.Len() != 0 {
		t.Errorf("Init again = %v, said %q; want the refusal alone", err, stdout.String())
	}
}

// Init from a description writes its flows and names the description in
// what to run next; a description that cannot be loaded writes nothing.
func TestInitFromOpenAPI(t *testing.T) {
	spec, dir := writeSpec(t), t.TempDir()
	var stdout, stderr strings.Builder
	if err := Init(dir, spec, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	want := "next: adapt each flow's components and policy, then run: idemlint openapi check --spec " + spec + " " + dir + "\n"
	if _, err := os.Stat(filepath.Join(dir, "orders", "04-adapter.json")); err != nil || !strings.HasSuffix(stdout.String(), want) {
		t.Errorf("Init from %s: %v, said %q; want the orders flow written and to end with %q", spec, err, stdout.String(), want)
	}
	empty := t.TempDir()
	missing := filepath.Join(empty, "missing.yaml")
	if err := Init(empty, missing, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("Init from a missing description = %v, want an error naming it", err)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("Init from a missing description wrote %d entries, want none", len(entries))
	}
}

// writeSpec writes an OpenAPI description of one tagged write, which
// declares no key header, and returns its path.
func writeSpec(t *testing.T) string {
	t.Helper()
	spec := filepath.Join(t.TempDir(), "openapi.yaml")
	err := os.WriteFile(spec, []byte(`openapi: 3.0.3
info: {title: shop, version: "2"}
paths:
  /orders:
    post:
      operationId: createOrder
      tags: [orders]
      responses: {"201": {description: created}}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func keys(s *Set) []string {
	var out []string
	for p := range s.Files {
		out = append(out, p)
	}
	return out
}
