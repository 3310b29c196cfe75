package checks

// IDL002 validates a document against the JSON Schema of its kind, plus
// the one structural constraint JSON Schema cannot state: operation_key is
// unique within a document.
var IDL002 = register(&Rule{
	ID:       "IDL002",
	Name:     "schema",
	Severity: Error,
	Summary:  "the document matches the JSON Schema of its boundary kind",
	Doc: `Each boundary kind has a JSON Schema (draft 2020-12; print it with
"idemlint schema KIND"): required fields, types, enums, and no unknown fields.
An unknown field is almost always a typo ("require_keys" for "require_key"),
and a typo in a policy silently turns a safeguard off, so it is an error.
Extension fields whose names start with "x-" are allowed anywhere.
Operation keys must be unique within a document, because chains link
operations across hops by operation_key.

Fix: correct the field the message names. Add "$schema" pointing at the
printed schema to get completion and inline errors in your editor.`,
	CheckDocument: func(p *DocumentPass) {
		root := p.Doc.Root
		for _, v := range p.Options.schemaValidator().Validate(root, p.Doc.Position.Source()) {
			n := root.Nearest(v.Pointer)
			f := newFinding(p.Rule, p.Rule.Severity, p.Doc, n, v.Pointer, v.Message, nil)
			*p.findings = append(*p.findings, f)
		}
		seen := map[string]bool{}
		for _, op := range p.Doc.Operations {
			if op.Key == "" {
				continue
			}
			if seen[op.Key] {
				p.Report(op.Node.Get("operation_key"), "duplicate operation_key %q; each operation of a document needs its own key", op.Key)
			}
			seen[op.Key] = true
		}
	},
})
