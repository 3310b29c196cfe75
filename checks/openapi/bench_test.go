package openapi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v4"
)

// bigAPI writes a description of paths path items, each with a GET and a
// PUT that uses a shared key parameter, as YAML (or JSON), and returns its
// path. 1,000 path items are about 1.1 MB of YAML.
func bigAPI(b *testing.B, paths int, asJSON bool) string {
	b.Helper()
	type obj = map[string]any
	key := []any{obj{"$ref": "#/components/parameters/Key"}}
	items := obj{}
	for i := range paths {
		items[fmt.Sprintf("/things%d/{id}", i)] = obj{
			"parameters": []any{obj{"name": "id", "in": "path", "required": true, "schema": obj{"type": "string"}}},
			"get": obj{"operationId": fmt.Sprintf("getThing%d", i), "tags": []any{fmt.Sprintf("things%d", i%50)},
				"description": "Returns the thing, with every field the client may need to render it.",
				"responses": obj{"200": obj{"description": "the thing", "content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Thing"}}}},
					"404": obj{"$ref": "#/components/responses/Problem"}}},
			"put": obj{"operationId": fmt.Sprintf("putThing%d", i), "parameters": key,
				"requestBody": obj{"content": obj{"application/json": obj{"schema": obj{"type": "object",
					"properties": obj{"name": obj{"type": "string", "maxLength": 200}, "size": obj{"type": "integer"}}}}}},
				"responses": obj{"200": obj{"description": "replaced"}, "400": obj{"$ref": "#/components/responses/Problem"},
					"409": obj{"$ref": "#/components/responses/Problem"}, "422": obj{"$ref": "#/components/responses/Problem"}}},
		}
	}
	doc := obj{"openapi": "3.0.3", "info": obj{"title": "Big", "version": "1"},
		"servers": []any{obj{"url": "https://api.example.com/v1"}}, "paths": items,
		"components": obj{
			"parameters": obj{"Key": obj{"name": "Idempotency-Key", "in": "header", "required": true, "schema": obj{"type": "string"}}},
			"schemas":    obj{"Thing": obj{"type": "object", "properties": obj{"id": obj{"type": "string"}}}},
			"responses":  obj{"Problem": obj{"description": "problem"}},
		}}
	name, marshal := "api.yaml", yaml.Marshal
	if asJSON {
		name, marshal = "api.json", func(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
	}
	data, err := marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkLoad loads a description of 1,000 path items and 2,000
// operations, as 1.5 MB of YAML (0.21-0.29 s, 71 MB allocated) and as
// 1.7 MB of JSON (0.45-0.65 s, 269 MB: kin-openapi reads JSON as YAML
// flow style). Loading with positions (IncludeOrigin) takes about 55
// times a YAML file's size and 95 times a JSON file's, so the 8 MiB limit
// on a description is also its memory bound; positions cost about 40%
// more time than loading without them, what a second parse of our own to
// locate the operations would cost too, so we use the library's.
func BenchmarkLoad(b *testing.B) {
	for _, asJSON := range []bool{false, true} {
		path := bigAPI(b, 1000, asJSON)
		info, _ := os.Stat(path)
		b.Run(fmt.Sprintf("%s-%dKB", filepath.Ext(path)[1:], info.Size()>>10), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				api, err := Load(path)
				if err != nil {
					b.Fatal(err)
				}
				if len(api.Operations) != 2000 {
					b.Fatalf("%d operations", len(api.Operations))
				}
			}
		})
	}
}
