package checks

import (
	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL106 checks that the owner policy says exactly what makes two requests
// "the same payload": without that, conflict detection is guesswork.
var idl106 = &Rule{
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
  - an explicit "canonicalization": one for every body, or an object
    naming one per request media type ("application/json":
    "canonical_json", "application/x-www-form-urlencoded":
    "canonical_form", "*/*" for any other type).
"raw_bytes" canonicalization, for every body or for one media type, is a
warning: clients and proxies may re-encode JSON (whitespace, key order,
number spelling) or a form (field order), so a genuine retry can look like
a different payload and be rejected as a conflict.

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
		fp := &pol.Fingerprint
		switch fp.State {
		case boundary.Absent:
			p.Missing(pol.Pos, "idempotency_fingerprint",
				`add idempotency_fingerprint with "inputs" (e.g. ["method", "path", "body"]) and "canonicalization": "canonical_json"`)
			return
		case boundary.Invalid:
			return
		}
		switch inputs := fp.Inputs; {
		case !inputs.Present():
			p.Missing(fp.Pos, "inputs", `add "inputs" to idempotency_fingerprint, e.g. ["method", "path", "body"]`)
		case !inputs.OK():
			// IDL002 reports the type.
		case len(inputs.Items) == 0:
			p.Report(inputs.Pos, `list the request parts in idempotency_fingerprint.inputs, e.g. "method", "path", "body": an empty fingerprint makes every request look like the same payload`)
		case !inputs.Contains("body"):
			if op, ok := firstBodyOperation(pol.Operations.Items); ok {
				p.Report(inputs.Pos, "add %q to idempotency_fingerprint.inputs: operation %q (%s) has a body", "body", op.Key.Value, op.Method.Value)
			}
		}
		canon := fp.Canonicalization
		if !canon.Present() {
			p.Missing(fp.Pos, "canonicalization", `add "canonicalization": "canonical_json" to idempotency_fingerprint`)
			return
		}
		if canon.ByMediaType == nil {
			if canon.Value == "raw_bytes" {
				p.Warn(canon.Pos, `use "canonical_json" instead of "raw_bytes": whitespace or key order changes make a retry look like a different payload`)
			}
			return
		}
		for _, m := range canon.ByMediaType {
			if m.Name.Value != "raw_bytes" {
				continue
			}
			if m.MediaType == formMediaType {
				p.Warn(m.Name.Pos, `use "canonical_form" instead of "raw_bytes" for %s: a retry that orders its fields otherwise looks like a different payload`, m.MediaType)
			} else {
				p.Warn(m.Name.Pos, `use "canonical_json" instead of "raw_bytes" for %s: whitespace or key order changes make a retry look like a different payload`, m.MediaType)
			}
		}
	},
}

// formMediaType is the media type of HTML form bodies, which the
// canonical_form canonicalization reads.
const formMediaType = "application/x-www-form-urlencoded"

// firstBodyOperation returns the first operation, in document order, whose
// method sends a body that decides what the request does.
func firstBodyOperation(ops []boundary.Operation) (*boundary.Operation, bool) {
	for i := range ops {
		switch ops[i].Method.Value {
		case "POST", "PUT", "PATCH":
			return &ops[i], true
		}
	}
	return nil, false
}
