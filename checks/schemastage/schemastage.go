// Package schemastage installs the JSON Schema validator of package
// schemas as the checks' schema stage (checks.SchemaStage), the half of
// IDL002 that JSON Schema states. Import it for its effect:
//
//	import _ "github.com/idemlint/idemlint/checks/schemastage"
//
// It stands apart from the core checks so that a program importing only
// them compiles no JSON Schema library (santhosh-tekuri/jsonschema and the
// golang.org/x/text it brings).
package schemastage

import (
	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/schemas"
)

func init() {
	checks.UseSchema(func() checks.SchemaStage { return schemas.NewValidator() })
}
