package openapi

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad holds Load to an error, never a panic or a hang, on any bytes.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(shopYAML))
	f.Add([]byte("openapi: 3.1.0\npaths: {/a: {$ref: '#/paths/~1a'}}\n"))
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
		}
	})
}
