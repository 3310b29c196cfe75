package schemas

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// refuseAll is a loader for a compiler that must resolve everything from
// the one schema it is given, as an editor without network access would.
type refuseAll struct{}

func (refuseAll) Load(url string) (any, error) {
	return nil, fmt.Errorf("would have to load %s", url)
}

// Each self-contained schema compiles alone, with no loader, and judges
// documents as the embedded set does.
func TestSelfContainedResolvesAlone(t *testing.T) {
	names := append(Kinds(), commonName, envelopeName, "config")
	for _, name := range names {
		src, ok := SelfContained(name)
		if !ok {
			t.Fatalf("SelfContained(%q) unknown", name)
		}
		if bytes.Contains(src, []byte(".schema.json#")) {
			t.Errorf("%s: still references another file", name)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
		if err != nil {
			t.Fatalf("%s: not JSON: %v", name, err)
		}
		c := jsonschema.NewCompiler()
		c.UseLoader(refuseAll{})
		if err := c.AddResource("file:///offline/"+name+".schema.json", doc); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile("file:///offline/" + name + ".schema.json"); err != nil {
			t.Errorf("%s: does not compile alone: %v", name, err)
		}
	}
}

func TestSelfContainedValidatesLikeTheEmbeddedSchemas(t *testing.T) {
	files, err := filepath.Glob("../fixtures/valid/orders-basic/*.json")
	if err != nil || len(files) != 4 {
		t.Fatalf("starter fixtures: %v %v", files, err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		kind := doc.(map[string]any)["boundary"].(string)
		src, _ := SelfContained(kind)
		schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.UseLoader(refuseAll{})
		if err := c.AddResource("file:///offline/s.json", schemaDoc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile("file:///offline/s.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(doc); err != nil {
			t.Errorf("%s: the valid document fails its self-contained schema: %v", file, err)
		}
		// A misspelt role fails it, through a definition taken from common.
		broken, err := jsonschema.UnmarshalJSON(strings.NewReader(strings.Replace(string(data), `"role": "`, `"role": "x`, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(broken) == nil && strings.Contains(string(data), `"role"`) {
			t.Errorf("%s: a document with an unknown role passes its self-contained schema", file)
		}
	}
}

// WriteFiles writes each schema as SelfContained returns it, creating the
// directory, and names each file it wrote.
func TestWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "schemas")
	var out strings.Builder
	names := []string{"adapter", "config"}
	if err := WriteFiles(&out, dir, names); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, name := range names {
		path := filepath.Join(dir, name+".schema.json")
		fmt.Fprintf(&want, "wrote %s\n", path)
		got, err := os.ReadFile(path)
		src, _ := SelfContained(name)
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("%s: %v; want the self-contained schema", path, err)
		}
	}
	if out.String() != want.String() {
		t.Errorf("WriteFiles said %q, want %q", out.String(), want.String())
	}
	empty := filepath.Join(t.TempDir(), "empty")
	want.Reset()
	fmt.Fprintf(&want, "unknown schema %q (want one of %s)", "nope", strings.Join(Names(), ", "))
	if err := WriteFiles(&out, empty, []string{"adapter", "nope"}); err == nil || err.Error() != want.String() {
		t.Errorf("WriteFiles(nope) = %v, want %s", err, want.String())
	}
	if _, err := os.Stat(empty); err == nil {
		t.Errorf("WriteFiles(nope) created %s", empty)
	}
}

// Show lists the names, prints one schema, or writes them.
func TestShow(t *testing.T) {
	var list, one, written strings.Builder
	if err := Show(&list, "", ""); err != nil || list.String() != strings.Join(Names(), "\n")+"\n" {
		t.Errorf("Show() = %v, %q; want the names, one a line", err, list.String())
	}
	src, _ := SelfContained("adapter")
	if err := Show(&one, "adapter", ""); err != nil || one.String() != string(src) {
		t.Errorf("Show(adapter) = %v; want the self-contained schema", err)
	}
	dir := t.TempDir()
	if err := Show(&written, "", dir); err != nil || strings.Count(written.String(), "wrote ") != len(Names()) {
		t.Errorf("Show(--out) = %v, %q; want every schema written", err, written.String())
	}
	if err := Show(&one, "nope", ""); err == nil || !strings.HasPrefix(err.Error(), `unknown schema "nope" (want one of adapter, `) {
		t.Errorf("Show(nope) = %v", err)
	}
}
