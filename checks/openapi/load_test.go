package openapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// write creates the files (name -> content) under a fresh directory and
// returns the directory.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const shopYAML = `openapi: 3.0.3
info: {title: Shop, version: "2026-03"}
servers:
  - url: https://{host}/{base}/
    variables:
      host: {default: shop.example.com}
      base: {default: api}
paths:
  /orders/{orderId}:
    parameters:
      - $ref: '#/components/parameters/Key'
      - {name: x-trace, in: header, required: true, schema: {type: string}}
    delete:
      operationId: cancelOrder
      parameters:
        - {name: X-TRACE, in: header, required: false, schema: {type: string}}
      responses:
        '204': {description: cancelled}
        4XX: {$ref: 'shared/responses.yaml#/Problem'}
        default: {description: anything else}
    get:
      servers: [{url: /internal}]
      responses: {'200': {description: the order}}
components:
  parameters:
    Key: {name: Idempotency-Key, in: header, required: true, schema: {type: string}}
`

func TestLoadReadsOperationsWithPositions(t *testing.T) {
	dir := write(t, map[string]string{
		"api.yaml":              shopYAML,
		"shared/responses.yaml": "Problem:\n  description: a problem\n",
	})
	spec := filepath.Join(dir, "api.yaml")
	api, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	if api.Version != "3.0.3" || api.InfoVersion != "2026-03" || len(api.Operations) != 2 {
		t.Fatalf("got version %q, info version %q, %d operations", api.Version, api.InfoVersion, len(api.Operations))
	}
	del, get := api.Operations[0], api.Operations[1]
	want := &Operation{
		Method: "DELETE", Template: "/orders/{orderId}", BasePaths: []string{"/api"}, ID: "cancelOrder",
		At: Location{spec, 13, 5}, Pointer: "/paths/~1orders~1{orderId}/delete",
		HeaderParams: []Param{
			{Name: "Idempotency-Key", Required: true, At: Location{spec, 26, 5}, Pointer: "/components/parameters/Key"},
			// The operation's own parameter replaces the path item's.
			{Name: "X-TRACE", Required: false, At: Location{spec, 16, 12}, Pointer: "/paths/~1orders~1{orderId}/delete/parameters/0"},
		},
		Responses:   []string{"204", "4XX", "default"},
		ResponsesAt: Location{spec, 17, 7},
	}
	if diff := cmp.Diff(want, del, cmp.AllowUnexported(Operation{})); diff != "" {
		t.Errorf("DELETE operation (-want +got):\n%s", diff)
	}
	if !del.Declares(409) || !del.Declares(422) || !del.Declares(500) || get.Declares(404) {
		t.Errorf("a 4XX response declares every 4xx status and \"default\" every status; got 409 %v, 422 %v, 500 %v, and 404 %v without either", del.Declares(409), del.Declares(422), del.Declares(500), get.Declares(404))
	}
	if get.Method != "GET" || !cmp.Equal(get.BasePaths, []string{"/internal"}) {
		t.Errorf("an operation's servers replace the document's: got %s with base paths %q", get.Method, get.BasePaths)
	}
}

func TestFindMatchesTemplatesWhateverTheParameterNames(t *testing.T) {
	dir := write(t, map[string]string{"api.yaml": shopYAML, "shared/responses.yaml": "Problem: {description: p}\n"})
	api, err := Load(filepath.Join(dir, "api.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"DELETE", "/api/orders/{id}", 1},
		{"delete", "/api/orders/{order_id}", 1},
		{"DELETE", "/orders/{id}", 0},      // without the server's base path
		{"DELETE", "/api/orders/{id}/", 0}, // a trailing slash is another route
		{"POST", "/api/orders/{id}", 0},
		{"GET", "/internal/orders/{x}", 1},
		{"GET", "/api/orders/{x}", 0},
	} {
		if got := len(api.Find(tc.method, tc.path)); got != tc.want {
			t.Errorf("Find(%s %s) = %d operations, want %d", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestLoadRefusesWhatItCannotUse(t *testing.T) {
	head := "openapi: 3.1.0\ninfo: {title: t, version: '1'}\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"not openapi", `{"name": "left-pad", "version": "1.0.0"}`, `not an OpenAPI description: no "openapi" or "swagger" field`},
		{"swagger 1.2", "swagger: '1.2'\ninfo: {title: t, version: '1'}\npaths: {/a: {}}\n", `OpenAPI "1.2" is not supported; idemlint reads Swagger 2.0 and OpenAPI 3.x`},
		{"swagger without paths", "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n", `the OpenAPI description has no "paths"`},
		{"openapi 4", "openapi: 4.0.0\ninfo: {title: t, version: '1'}\npaths: {/a: {}}\n", `OpenAPI "4.0.0" is not supported`},
		{"no paths", head, `the OpenAPI description has no "paths"`},
		{"not yaml", "paths: [unclosed\n", "api.yaml:2:1: not valid YAML or JSON"},
		{"duplicate key in yaml", "openapi: 3.0.3\ninfo: {version: '1', version: '2'}\npaths: {/a: {}}\n", `api.yaml:2:22: not valid YAML: duplicate key "version"`},
		{"not an object", "- openapi\n", "not an OpenAPI description: not a YAML or JSON object"},
		{"duplicate key in json", `{"openapi": "3.0.3",` + "\n" + `"openapi": "3.1.0"}`, `api.yaml:2:1: not valid JSON: duplicate key "openapi"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := write(t, map[string]string{"spec/api.yaml": tc.text, "params.yaml": "Key: {name: k, in: header}\n"})
			_, err := Load(filepath.Join(dir, "spec", "api.yaml"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestLoadLeavesOutWhatABrokenRefNeeds: a $ref that does not resolve
// never refuses the description. One an operation needs (a parameter, a
// response, a path item) leaves that operation out; one in a part
// idemlint does not read (a body schema, an unused component) is ignored;
// each is named in a note, with where it is written and why.
func TestLoadLeavesOutWhatABrokenRefNeeds(t *testing.T) {
	dir := write(t, map[string]string{"spec/api.yaml": `openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /url:
    post:
      parameters: [{$ref: 'https://example.com/params.yaml#/Key'}]
      responses: {'201': {description: ok}}
  /outside:
    post:
      parameters: [{$ref: '../params.yaml#/Key'}]
      responses: {'201': {description: ok}}
  /dangling:
    post:
      parameters: [{$ref: '#/components/parameters/Nope'}]
      responses: {'201': {description: ok}}
  /missing-file:
    post:
      responses: {'201': {$ref: 'responses.yaml#/Created'}}
  /item:
    $ref: '#/components/pathItems/Nope'
  /fine:
    post:
      requestBody:
        content:
          application/json: {schema: {$ref: '#/components/schemas/Nope'}}
      responses: {'201': {description: ok}}
components:
  schemas:
    Order: {properties: {kind: {$ref: '#/components/schemas/Kind'}}}
`, "params.yaml": "Key: {name: k, in: header}\n"})
	spec := filepath.Join(dir, "spec", "api.yaml")
	api, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(api.Operations) != 1 || api.Operations[0].Template != "/fine" {
		t.Errorf("read %d operations, want POST /fine alone", len(api.Operations))
	}
	var got []string
	for _, n := range api.Notes {
		got = append(got, kindNames[n.Kind]+": "+strings.ReplaceAll(n.Instance, dir+string(filepath.Separator), ""))
	}
	spec = filepath.Join("spec", "api.yaml")
	want := []string{
		"left out: " + spec + `:5:5: POST /url: $ref "https://example.com/params.yaml#/Key": refused: idemlint never fetches over the network; download https://example.com/params.yaml#/Key next to the description and refer to the file`,
		"left out: " + spec + `:9:5: POST /outside: $ref "../params.yaml#/Key": refused: params.yaml is outside the directory of the description`,
		"left out: " + spec + `:13:5: POST /dangling: $ref "#/components/parameters/Nope": no "parameters" in ` + spec,
		"left out: " + spec + `:17:5: POST /missing-file: $ref "responses.yaml#/Created": cannot read ` + filepath.Join("spec", "responses.yaml") + ": no such file or directory",
		"left out: " + spec + `:20:11: path item /item: $ref "#/components/pathItems/Nope": no "pathItems" in ` + spec,
		"ignored: " + spec + `:25:45: $ref "#/components/schemas/Nope": no "Nope" in ` + spec,
		"ignored: " + spec + `:29:39: $ref "#/components/schemas/Kind": no "Kind" in ` + spec,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

var kindNames = map[*NoteKind]string{NoteUnreadable: "left out", NoteIgnoredRef: "ignored"}

// TestLoadBoundsTheSize reads no more than MaxFileSize of a huge file; the
// file is sparse, so the test writes nothing like 50 MB.
func TestLoadBoundsTheSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Load(path)
	if err == nil || !strings.Contains(err.Error(), "larger than the 8 MiB limit for an OpenAPI description") {
		t.Fatalf("Load error = %v, want the size limit", err)
	}
}

// TestLoadOpenAPI31 covers what 3.1 adds: webhooks are not calls a browser
// makes, and the operations of a path item shared under
// components/pathItems are placed where they are written.
func TestLoadOpenAPI31(t *testing.T) {
	dir := write(t, map[string]string{"api.yaml": `openapi: 3.1.0
info: {title: t, version: "1", license: {name: MIT, identifier: MIT}}
webhooks:
  orderShipped:
    post:
      responses: {'200': {description: ok}}
paths:
  /orders:
    $ref: '#/components/pathItems/Orders'
components:
  pathItems:
    Orders:
      post:
        parameters:
          - {name: x-idempotency-key, in: header, required: true, schema: {type: [string, 'null']}}
        responses: {'201': {description: ok}}
`})
	spec := filepath.Join(dir, "api.yaml")
	api, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(api.Operations) != 1 {
		t.Fatalf("got %d operations, want only POST /orders", len(api.Operations))
	}
	o := api.Operations[0]
	if o.At != (Location{spec, 13, 7}) || o.Pointer != "/components/pathItems/Orders/post" {
		t.Errorf("POST /orders at %+v, %s; want its key under components/pathItems at 13:7", o.At, o.Pointer)
	}
	if p, ok := o.Header("X-Idempotency-Key"); !ok || !p.Required {
		t.Errorf("the shared path item's key parameter: %+v, found %v", p, ok)
	}
}

// TestLoadPlacesSharedParametersInTheirFile: a parameter defined in
// another file is reported there, at the $ref's fragment.
func TestLoadPlacesSharedParametersInTheirFile(t *testing.T) {
	dir := write(t, map[string]string{
		"api.yaml": `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /orders:
    post:
      parameters:
        - $ref: 'shared/params.yaml#/Key'
      responses: {'201': {description: ok}}
`,
		"shared/params.yaml": "# shared parameters\nKey:\n  name: x-idempotency-key\n  in: header\n",
	})
	api, err := Load(filepath.Join(dir, "api.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got := api.Operations[0].HeaderParams
	want := []Param{{Name: "x-idempotency-key", At: Location{filepath.Join(dir, "shared", "params.yaml"), 2, 1}, Pointer: "/Key"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("header parameters (-want +got):\n%s", diff)
	}
}
