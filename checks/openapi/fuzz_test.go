package openapi

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/idemlint/idemlint/fixtures"
)

// FuzzLoad holds Load to an error, never a panic or a hang, on any bytes.
func FuzzLoad(f *testing.F) {
	cases, err := fixtures.Cases()
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range cases {
		if c.Spec != "" {
			data, err := fs.ReadFile(c.Files, c.Spec)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte(shopYAML))
	f.Add([]byte("openapi: 3.1.0\npaths: {/a: {$ref: '#/paths/~1a'}}\n"))
	f.Add([]byte("swagger: '2.0'\nbasePath: /v1\nparameters: {K: {name: Idempotency-Key, in: header}}\npaths: {/a: {post: {parameters: [{$ref: '#/parameters/K'}, {in: body, name: b, schema: {$ref: '#/definitions/Nope'}}], responses: {default: {description: x}}}}}\n"))
	f.Add([]byte(`{"openapi": "3.0.0", "paths": {"/a": {"post": {"requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {"allOf": [{"$ref": "#/x"}, {"properties": {"idempotency_key": {}}}]}}}}, "responses": {"201": {"$ref": "#/r"}}}}}}`))
	f.Add([]byte("openapi: 3.0.0\nx: &a {$ref: '#/x'}\npaths: {/a: {post: {parameters: [*a, *a]}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "api.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		api, err := Load(path)
		if err == nil {
			for _, o := range api.Operations {
				o.Declares(409)
				api.Find(o.Method, o.Template)
			}
			KeyHeader(api)
			WriteNotes(io.Discard, api.Notes, true)
		}
	})
}
