package checks

import "github.com/idemlint/idemlint/schemas/jsontree"

// SchemaStage is the JSON Schema half of IDL002: it holds a document as
// written to the schema of its kind (types, enums, bounds, unknown fields)
// and says each violation in the schema's words.
//
// The typed decoder's verdict and the rules are the floor of every run;
// the schema stage words it when the run's options have one
// (Options.Schema). The core compiles no JSON Schema library itself:
// checks/lint sets the validator of package schemas for idemlint's runs,
// so a program that needs only the per-document verdict (the reference
// engine) can leave the library out.
type SchemaStage interface {
	// EachViolation calls report with the JSON Pointer and the message of
	// each violation of the document root, parsed from src. It is called
	// from several goroutines at once.
	EachViolation(root *jsontree.Node, src string, report func(pointer, message string))
}
