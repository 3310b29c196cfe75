package asbuilt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// aliasSquare is a VirtualService whose http list holds n aliases of a
// route whose match list holds n aliases: n² matches from a file of a
// few times n bytes, the shape of an alias bomb that a reader following
// aliases along the fields it reads would pay for.
func aliasSquare(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: bomb}\n")
	b.WriteString("u: &u {uri: {prefix: /}}\n")
	b.WriteString("m: &m [" + strings.TrimSuffix(strings.Repeat("*u,", n), ",") + "]\n")
	b.WriteString("r: &r {match: *m, route: [{destination: {host: x}}]}\n")
	b.WriteString("spec: {http: [" + strings.TrimSuffix(strings.Repeat("*r,", n), ",") + "]}\n")
	return b.String()
}

func TestAliasesAreBounded(t *testing.T) {
	s := Parse("bomb.yaml", []byte(aliasSquare(5000)))
	if len(s.Errors) != 1 || !strings.Contains(s.Errors[0].Error(), "alias") {
		t.Fatalf("errors = %v, want one refusing the aliases", s.Errors)
	}
	if len(s.Resources) != 0 {
		t.Errorf("a refused file still yields %d resources", len(s.Resources))
	}
	// The same shape, small, is an ordinary use of anchors: read whole.
	s = Parse("anchors.yaml", []byte(aliasSquare(3)))
	if len(s.Errors) != 0 || len(s.Resources) != 1 || len(s.Resources[0].Routes) != 3 || len(s.Resources[0].Routes[0].Matches) != 3 {
		t.Fatalf("anchors: errors %v, resources %d", s.Errors, len(s.Resources))
	}
}

// TestBillionLaughs: an exponential alias bomb in fields idemlint
// does not read costs nothing, and one in a field it reads as a string
// is a problem at that field.
func TestBillionLaughs(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: networking.istio.io/v1\nkind: VirtualService\n")
	b.WriteString("lol0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "lol%d: &a%d [*a%[2]d_, *a%[2]d_, *a%[2]d_, *a%[2]d_, *a%[2]d_, *a%[2]d_, *a%[2]d_, *a%[2]d_, *a%[2]d_]\n", i, i)
	}
	src := b.String()
	for i := 1; i < 10; i++ {
		src = strings.ReplaceAll(src, fmt.Sprintf("*a%d_", i), fmt.Sprintf("*a%d", i-1))
	}
	src += "metadata: {name: *a9}\nspec: {hosts: *a9}\n"
	s := Parse("lol.yaml", []byte(src))
	if len(s.Errors) != 0 || len(s.Resources) != 1 {
		t.Fatalf("errors %v, resources %d", s.Errors, len(s.Resources))
	}
	got := make([]string, 0, len(s.Problems))
	for _, p := range s.Problems {
		got = append(got, p.At.String()+": "+p.Message)
	}
	// Reported where the aliases are written: metadata.name's, and the
	// nine entries of the list spec.hosts names.
	want := []string{"lol.yaml:13:18: metadata.name is not a single value"}
	for col := 12; col <= 52; col += 5 {
		want = append(want, fmt.Sprintf("lol.yaml:12:%d: spec.hosts entry is not a single value", col))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestHostileFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// 50 MB, sparse: the reader must refuse it without holding it.
	if err := f.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	good := write("good.yaml", "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: ok, namespace: shop}\nspec: {rules: [{backendRefs: [{name: orders}]}]}\n")
	paths := []string{
		huge,
		write("deep.yaml", "kind: HTTPRoute\nspec: "+strings.Repeat("[", 100000)),
		// Not a kind idemlint reads: skipped unparsed, like a broken
		// Deployment (check skips unrelated JSON files alike).
		write("unrelated.yaml", "kind: Deployment\nspec: "+strings.Repeat("[", 100000)),
		write("latin1.yaml", "kind: VirtualService\nmetadata: {name: caf\xe9}\n"),
		write("broken.json", `{"kind": "HTTPRoute", "spec": {`),
		write("tabs.json", "{\n\t\"kind\": \"Service\",\n\t\"apiVersion\": \"v1\"\n}\n"),
		good,
		filepath.Join(dir, "missing.yaml"),
	}
	s := Read(paths)
	var got []string
	for _, e := range s.Errors {
		rel, _ := filepath.Rel(dir, e.At.File)
		got = append(got, fmt.Sprintf("%s:%d:%d: %v", rel, e.At.Line, e.At.Column, e.Err))
	}
	want := []string{
		"huge.yaml:0:0: file is larger than the 8 MiB limit for an infrastructure file",
		"deep.yaml:2:" + fmt.Sprint(7+maxDepth) + ": not valid YAML or JSON: while increasing flow level: exceeded max depth of 500",
		"latin1.yaml:2:21: not UTF-8: the byte 0xe9 starts no UTF-8 character",
		"broken.json:2:1: not valid YAML or JSON: while parsing a flow node: did not find expected node content",
		"missing.yaml:0:0: no such file or directory",
	}
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !strings.HasPrefix(g, w) || (g == "") != (w == "") {
			t.Errorf("error %d:\n got %s\nwant %s...", i, g, w)
		}
	}
	if len(s.Resources) != 1 || s.Resources[0].Name.Value != "ok" || s.Skipped != 2 {
		t.Errorf("the readable files: %d resources, %d skipped; want the HTTPRoute read, the Service and the Deployment skipped", len(s.Resources), s.Skipped)
	}
}

// TestTags: a value idemlint reads with a tag other than a plain
// scalar's is a problem at the value; the rest of the resource is read.
func TestTags(t *testing.T) {
	src := `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: !!binary b3JkZXJz
  namespace: shop
spec:
  hosts: [orders]
  http:
  - route:
    - destination: {host: !vault secret/orders}
    - destination: {host: orders}
    retries: {attempts: !!int "2", retryOn: !!timestamp 2001-12-14}
`
	s := Parse("tags.yaml", []byte(src))
	var got []string
	for _, p := range s.Problems {
		got = append(got, p.At.String()+" "+p.Message)
	}
	want := []string{
		"tags.yaml:4:9 metadata.name has the tag !!binary; idemlint reads only plain strings, numbers and booleans here",
		"tags.yaml:10:27 route.destination.host has the tag !vault; idemlint reads only plain strings, numbers and booleans here",
		"tags.yaml:12:45 retries.retryOn has the tag !!timestamp; idemlint reads only plain strings, numbers and booleans here",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(s.Resources) != 1 {
		t.Fatalf("%d resources", len(s.Resources))
	}
	rt := s.Resources[0].Routes[0]
	if len(rt.Backends) != 1 || rt.Backends[0].Value != "orders" || rt.Retry.Attempts != 3 {
		t.Errorf("backends %v, attempts %d; want the untagged backend and 2 retries", rt.Backends, rt.Retry.Attempts)
	}
}

func TestDocuments(t *testing.T) {
	src := "# leading comment\n---\na: 1\nb: |\n  ---\n  text\n--- # second\nc: 2\n...\n---\td: 3\n---\n"
	var got []string
	for offset, doc := range documents([]byte(src)) {
		got = append(got, fmt.Sprintf("%d %q", offset, doc))
	}
	want := []string{
		`0 "# leading comment\n"`,
		`1 "---\na: 1\nb: |\n  ---\n  text\n"`,
		`6 "--- # second\nc: 2\n"`,
		`8 "...\n"`,
		`9 "---\td: 3\n"`,
		`10 "---\n"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("documents:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Positions after skipped documents, and in a file with a directive
	// (parsed whole), are the file's.
	for _, tt := range []struct {
		src           string
		line, skipped int
	}{
		{"kind: Deployment\n---\nkind: Service\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\n", 7, 2},
		{"%TAG !e! tag:example.com,2026:\n---\nkind: Deployment\n---\n\n\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\n", 9, 1},
	} {
		s := Parse("p.yaml", []byte(tt.src))
		if len(s.Resources) != 1 || s.Resources[0].Name.At.Line != tt.line || s.Skipped != tt.skipped || len(s.Errors) > 0 {
			t.Errorf("%q: resources %d, skipped %d, errors %v", tt.src, len(s.Resources), s.Skipped, s.Errors)
		}
	}
}

// TestUTF16 reads a file in UTF-16 with a byte order mark, as YAML allows.
func TestUTF16(t *testing.T) {
	src := "kind: Deployment\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: wide}\n"
	data := []byte{0xff, 0xfe}
	for _, r := range src {
		data = append(data, byte(r), 0)
	}
	s := Parse("utf16.yaml", data)
	if len(s.Errors) > 0 || len(s.Resources) != 1 || s.Resources[0].Name.Value != "wide" || s.Resources[0].Name.At.Line != 5 {
		t.Fatalf("errors %v, resources %d", s.Errors, len(s.Resources))
	}
}

// TestKindlessFilesAreBounded: Kong's and Envoy's files have no kind, and
// the same bounds hold for them: an alias square (n² routes from a file
// of a few times n bytes) is refused, a small one read whole, and deep
// nesting is a parse error.
func TestKindlessFilesAreBounded(t *testing.T) {
	list := func(alias string, n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(alias+",", n), ",") + "]"
	}
	squares := map[string]func(n int) string{
		"kong": func(n int) string {
			return "_format_version: \"3.0\"\nr: &r {paths: [/orders]}\nrs: &rs " + list("*r", n) +
				"\ns: &s {name: orders, host: orders.shop, routes: *rs}\nservices: " + list("*s", n) + "\n"
		},
		"envoy": func(n int) string {
			return "r: &r {match: {prefix: /}, route: {cluster: orders}}\nrs: &rs " + list("*r", n) +
				"\nvh: &vh {name: orders, domains: ['*'], routes: *rs}\nvirtual_hosts: " + list("*vh", n) + "\n"
		},
	}
	for name, square := range squares {
		s := Parse(name+".yaml", []byte(square(5000)))
		if len(s.Errors) != 1 || !strings.Contains(s.Errors[0].Error(), "alias") || len(s.Resources) != 0 {
			t.Errorf("%s bomb: errors %v, resources %d; want the aliases refused", name, s.Errors, len(s.Resources))
		}
		// Small, an ordinary use of anchors: three copies of one
		// resource, which are one resource.
		s = Parse(name+".yaml", []byte(square(3)))
		if len(s.Errors) != 0 || len(s.Resources) != 1 || len(s.Resources[0].Routes) != 3 {
			t.Errorf("%s anchors: errors %v, resources %d; want one of 3 routes", name, s.Errors, len(s.Resources))
		}
	}
	for name, src := range map[string]string{
		"kong":  "_format_version: \"3.0\"\nservices: " + strings.Repeat("[", 100000),
		"envoy": "static_resources: " + strings.Repeat("{a: ", 100000),
	} {
		s := Parse(name+".yaml", []byte(src))
		if len(s.Errors) != 1 || !strings.Contains(s.Errors[0].Error(), "max depth") {
			t.Errorf("%s nested: errors %v; want the depth refused", name, s.Errors)
		}
	}
}
