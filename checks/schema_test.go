package checks

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/schemas"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// validator is the JSON Schema stage idemlint runs (checks/lint sets it).
func validator() SchemaStage { return schemas.NewValidator() }

// The schema stage is what IDL002 adds to the decoder's verdict: without
// one installed the core still decodes and runs every rule, and the
// decoder's verdict is the finding, at the value that departs from the
// schema; with one, the validator words the violation.
func TestSchemaStageAddsToTheDecodersVerdict(t *testing.T) {
	base, err := fixtures.Lookup(fixtures.Base)
	if err != nil {
		t.Fatal(err)
	}
	src, err := fs.ReadFile(base.Files, "02-bff-to-gateway.json")
	if err != nil {
		t.Fatal(err)
	}
	// A misspelt role: the schema's enum, and IDL105 has nothing to say.
	typo := []byte(strings.Replace(string(src), `"validate_only"`, `"validate-only"`, 1))
	if string(typo) == string(src) {
		t.Fatal("the base BFF edge has no validate_only role to misspell")
	}
	schemaFindings := func(stage func() SchemaStage) []string {
		opts := DefaultOptions()
		opts.Schema = stage
		doc, findings := checkDocument("02-bff-to-gateway.json", typo, new(jsontree.Parser), newRun(&opts))
		if doc == nil {
			t.Fatal("the document did not decode")
		}
		var out []string
		for _, f := range findings {
			if f.Rule == idl002.ID {
				out = append(out, f.String()+" at "+f.Pointer)
			}
		}
		return out
	}
	decoders := `02-bff-to-gateway.json:14:13: error IDL002 "/http_idempotency/role" does not match the JSON Schema of its boundary kind (print it with "idemlint schema KIND") at /http_idempotency/role`
	if got := schemaFindings(nil); len(got) != 1 || got[0] != decoders {
		t.Errorf("without a schema stage: IDL002 findings %q, want [%q]", got, decoders)
	}
	got := schemaFindings(validator)
	want := `02-bff-to-gateway.json:14:13: error IDL002 "role" must be one of "owner", "validate_only", "passthrough", found "validate-only" at /http_idempotency/role`
	if len(got) != 1 || got[0] != want {
		t.Errorf("with the schemas' validator: IDL002 findings %q, want [%q]", got, want)
	}
}
