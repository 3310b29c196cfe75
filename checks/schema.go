package checks

import "github.com/idemlint/idemlint/schemas/jsontree"

// SchemaStage is the JSON Schema half of IDL002: it holds a document as
// written to the schema of its kind (types, enums, bounds, unknown fields)
// and says each violation in the schema's words.
//
// The typed decoder's verdict and the rules are the floor of every run;
// the schema stage adds to it when a program installs one (UseSchema). The
// core compiles no JSON Schema library itself: checks/schemastage installs
// the validator of package schemas when imported, as cmd/idemlint does, so
// a program that needs only the per-document verdict (the reference
// engine, once the decoder reports every violation itself) can leave the
// library out.
type SchemaStage interface {
	// EachViolation calls report with the JSON Pointer and the message of
	// each violation of the document root, parsed from src. It is called
	// from several goroutines at once.
	EachViolation(root *jsontree.Node, src string, report func(pointer, message string))
}

// newSchemaStage makes the schema stage of one run (its caches live as
// long as the run); nil when none is installed.
var newSchemaStage func() SchemaStage

// UseSchema installs the schema stage every later run uses, each run
// asking newStage for its own. Call it from an init function (as
// checks/schemastage does): runs read it without a lock.
func UseSchema(newStage func() SchemaStage) { newSchemaStage = newStage }

// schemaStage returns the schema stage of a new run, nil when none is
// installed.
func schemaStage() SchemaStage {
	if newSchemaStage == nil {
		return nil
	}
	return newSchemaStage()
}
