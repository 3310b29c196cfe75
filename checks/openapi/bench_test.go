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
// operations, as 1.5 MB of YAML and as 1.7 MB of JSON.
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

// stripeShaped writes a description shaped like Stripe's, as large: 250
// resources, each a GET and a form-encoded POST answered by a "default"
// error response, and a schema of 45 described properties, 4 MB of YAML
// with 500 operations; the key header documented in prose, declared
// nowhere.
func stripeShaped(b *testing.B) string {
	b.Helper()
	type obj = map[string]any
	items, schemas := obj{}, obj{}
	errResponse := obj{"description": "Error response.", "content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/error"}}}}
	for i := range 250 {
		name := fmt.Sprintf("resource_%d", i)
		props := obj{}
		for j := range 45 {
			props[fmt.Sprintf("field_%d", j)] = obj{"type": "string", "maxLength": 5000, "nullable": true,
				"description": fmt.Sprintf("Field %d of the %s: what it holds, when it is set, and which values the API accepts for it; "+
					"a description as long as the ones a public API publishes for its fields.", j, name)}
		}
		schemas[name] = obj{"type": "object", "title": name, "properties": props, "x-expandableFields": []any{"field_0"}}
		ref := obj{"$ref": "#/components/schemas/" + name}
		items[fmt.Sprintf("/v1/%ss/{id}", name)] = obj{
			"get": obj{"operationId": fmt.Sprintf("Get%d", i),
				"parameters": []any{obj{"name": "id", "in": "path", "required": true, "schema": obj{"type": "string"}}},
				"responses":  obj{"200": obj{"description": "The resource.", "content": obj{"application/json": obj{"schema": ref}}}, "default": errResponse}},
			"post": obj{"operationId": fmt.Sprintf("Post%d", i),
				"parameters":  []any{obj{"name": "id", "in": "path", "required": true, "schema": obj{"type": "string"}}},
				"requestBody": obj{"content": obj{"application/x-www-form-urlencoded": obj{"schema": ref, "encoding": obj{"metadata": obj{"explode": true, "style": "deepObject"}}}}},
				"responses":   obj{"200": obj{"description": "The resource.", "content": obj{"application/json": obj{"schema": ref}}}, "default": errResponse}},
		}
	}
	schemas["error"] = obj{"type": "object", "properties": obj{"message": obj{"type": "string"}}}
	doc := obj{"openapi": "3.0.0", "info": obj{"title": "Stripe-shaped", "version": "2023-08-16",
		"description": "Send an Idempotency-Key header to retry a POST safely."},
		"servers": []any{obj{"url": "https://api.example.com/"}}, "paths": items, "components": obj{"schemas": schemas}}
	data, err := yaml.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "spec3.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkLoadStripeShaped loads a description as large as Stripe's (4
// MB of YAML, 500 operations).
func BenchmarkLoadStripeShaped(b *testing.B) {
	path := stripeShaped(b)
	info, _ := os.Stat(path)
	b.Run(fmt.Sprintf("yaml-%dKB", info.Size()>>10), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			api, err := Load(path)
			if err != nil {
				b.Fatal(err)
			}
			if len(api.Operations) != 500 {
				b.Fatalf("%d operations", len(api.Operations))
			}
		}
	})
}
