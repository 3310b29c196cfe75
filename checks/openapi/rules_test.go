package openapi_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/fixtures"
)

// TestOpenAPIRulesSeeEverySet: with several boundary sets, the description
// is one contract. The refunds call that the fixture set's edge lacks is
// carried by a second set's browser edge, so IDL301 is quiet; alone, the
// fixture set breaks it.
func TestOpenAPIRulesSeeEverySet(t *testing.T) {
	c, err := fixtures.Lookup("rules/IDL301/refund-not-on-edge")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := c.Materialize(filepath.Join(dir, "orders")); err != nil {
		t.Fatal(err)
	}
	refunds := `{
  "spec_version": "idemlint.boundary/v1",
  "boundary": "browser_to_bff",
  "from": "web",
  "to": "refunds-bff",
  "operations": [{"operation_key": "refunds.create", "method": "POST", "path": "/api/orders/{order}/refunds"}],
  "cors_allowed_headers": ["x-idempotency-key"],
  "header_to_allow_inbound": ["x-idempotency-key"],
  "http_idempotency": {"require_key": {"methods": ["POST"]}}
}
`
	if err := os.MkdirAll(filepath.Join(dir, "refunds"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "refunds", "01-browser-to-bff.json"), []byte(refunds), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := lint.DefaultOptions()
	api, err := openapi.Load(filepath.Join(dir, "orders", c.Spec))
	if err != nil {
		t.Fatal(err)
	}
	opts.Inputs = append(opts.Inputs, openapi.Description.Supply(api))
	idl301 := func(paths ...string) int {
		o := opts
		o.Files.SetOf = func(path string) string { return filepath.Base(filepath.Dir(path)) }
		res, err := checks.CheckPaths(paths, o)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range res.Findings {
			if f.Rule == "IDL301" {
				n++
			}
		}
		return n
	}
	if n := idl301(filepath.Join(dir, "orders")); n != 1 {
		t.Errorf("the orders set alone: %d IDL301 findings, want 1", n)
	}
	if n := idl301(filepath.Join(dir, "orders"), filepath.Join(dir, "refunds")); n != 0 {
		t.Errorf("with the refunds set beside it: %d IDL301 findings, want 0", n)
	}
}
