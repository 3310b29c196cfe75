package openapi

import "github.com/idemlint/idemlint/checks"

// Rules are the OpenAPI rules, in id order: a run applies them when its
// caller lists them among its rules (checks.Options.Rules) and supplies
// the description (Description). A rule is a file (idlNNN.go) and a line here.
var Rules = checks.Rules{idl301, idl302, idl303, idl304}
