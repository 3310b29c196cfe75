package checks

import (
	"slices"

	"github.com/idemlint/idemlint/checks/boundary"
	"github.com/idemlint/idemlint/checks/jsontree"
)

// IDL106 checks that the owner policy says exactly what makes two requests
// "the same payload": without that, conflict detection is guesswork.
var IDL106 = register(&Rule{
	ID:       "IDL106",
	Name:     "fingerprint-explicit",
	Severity: Error,
	Summary:  "the owner policy declares idempotency_fingerprint inputs (body included for body methods) and canonicalization",
	Doc: `The adapter tells a retry from a misuse of the key by the request's
fingerprint: a hash of the parts listed in idempotency_fingerprint.inputs.
A retry must produce the same fingerprint, and a different request reusing
the key must not. A weak fingerprint treats different operations as one: if
"body" is left out, a second order with other items but the same key is
answered with the first order's stored response, and nobody notices.

Required, in the adapter policy (or the "adapter" object embedded in a
gateway_to_adapter document):
  - idempotency_fingerprint, with a non-empty "inputs" list;
  - "body" among the inputs when any operation uses POST, PUT or PATCH;
  - an explicit "canonicalization".
"raw_bytes" canonicalization is a warning: clients and proxies may re-encode
JSON (whitespace, key order, number spelling), so a genuine retry can look
like a different payload and be rejected as a conflict.

Fix: declare
  "idempotency_fingerprint": {"inputs": ["method", "path", "body"],
    "canonicalization": "canonical_json", "algorithm": "sha256"}
and list in "exclude_fields" any body field a retry legitimately changes
(a client timestamp, for example).`,
	CheckDocument: func(p *DocumentPass) {
		pol := p.Doc.Policy
		if pol == nil {
			return
		}
		fp := pol.Fingerprint
		if fp == nil {
			p.Missing(pol.Node, "idempotency_fingerprint",
				`add idempotency_fingerprint with "inputs" (e.g. ["method", "path", "body"]) and "canonicalization": "canonical_json"`)
			return
		}
		switch inputs := fp.Node.Get("inputs"); {
		case inputs == nil:
			p.Missing(fp.Node, "inputs", `add "inputs" to idempotency_fingerprint, e.g. ["method", "path", "body"]`)
		case inputs.Kind != jsontree.Array:
			// IDL002 reports the type.
		case len(inputs.Items) == 0:
			p.Report(inputs, `list the request parts in idempotency_fingerprint.inputs, e.g. "method", "path", "body": an empty fingerprint makes every request look like the same payload`)
		case !slices.Contains(fp.Inputs, "body"):
			if op, ok := firstBodyOperation(pol.Operations); ok {
				p.Report(inputs, "add %q to idempotency_fingerprint.inputs: operation %q (%s) has a body", "body", op.Key, op.Method)
			}
		}
		switch canon := fp.Node.Get("canonicalization"); {
		case canon == nil:
			p.Missing(fp.Node, "canonicalization", `add "canonicalization": "canonical_json" to idempotency_fingerprint`)
		case fp.Canonicalization == "raw_bytes":
			p.Warn(canon, `use "canonical_json" instead of "raw_bytes": whitespace or key order changes make a retry look like a different payload`)
		}
	},
})

// firstBodyOperation returns the first operation, in document order, whose
// method sends a body that decides what the request does.
func firstBodyOperation(ops []boundary.Operation) (boundary.Operation, bool) {
	for _, op := range ops {
		switch op.Method {
		case "POST", "PUT", "PATCH":
			return op, true
		}
	}
	return boundary.Operation{}, false
}
