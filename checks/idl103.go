package checks

import (
	"strconv"
	"strings"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL103 allows a retry only for requests that carry the key.
var idl103 = &Rule{
	ID:       "IDL103",
	Name:     "retry-requires-key",
	Severity: Error,
	Summary:  "http_retry.enabled implies requires_idempotency_key: true, and every retried state-changing method requires the key",
	Doc: `A retry is safe only when the receiver can recognise it as a duplicate, and
only the idempotency key makes that possible. A BFF or gateway that retries a
keyless POST after a timeout sends the side effect twice: the first attempt
may well have succeeded, and the adapter (or the external API behind it)
cannot tell the retry from a new request.

Reported on a document whose http_retry is enabled:
  - requires_idempotency_key absent or false;
  - a method in http_retry.methods for which a state-changing operation of
    the document does not require the key (http_idempotency.require_key
    covers it neither by method nor by operation_key). Without a methods
    list, the methods of the document's state-changing operations are the
    retried ones. Retrying GET, HEAD or OPTIONS needs no key, unless an
    operation declares itself state_changing: true.

Fix: set "requires_idempotency_key": true, and either add the method to
http_idempotency.require_key.methods (or each such operation to
require_key.operations) or stop retrying that method.`,
	CheckDocument: func(p *DocumentPass) {
		r := &p.Doc.Retry
		if !r.OK() || !r.Enabled.Value {
			return
		}
		switch n := r.RequiresIdempotencyKey; {
		case !n.Present():
			p.Missing(r.Pos, "requires_idempotency_key", `add "requires_idempotency_key": true to http_retry: a retry without the key repeats the side effect downstream`)
		case n.OK() && !n.Value:
			p.Report(n.Pos, "set http_retry.requires_idempotency_key to true: a retry without the key repeats the side effect downstream")
		}

		// Without http_idempotency no key is required at all; when the
		// document needs one, the schema says so (IDL002).
		idem := &p.Doc.Idempotency
		if !idem.OK() || !idem.RequireKey.Readable() {
			return
		}
		methods, unkeyed := unkeyedOperations(p.Doc, idem)
		if !r.Methods.Present() {
			for _, m := range methods {
				p.Report(r.Pos, `http_retry has no "methods", so it retries %s without a required key for %s: add %q to http_idempotency.require_key.methods or list only keyed methods in http_retry.methods`, m, unkeyed[m], m)
			}
			return
		}
		for _, it := range r.Methods.Items {
			if !it.OK() {
				continue
			}
			if keys, ok := unkeyed[strings.ToUpper(it.Value)]; ok {
				p.Report(it.Pos, "%s is retried without a required key for %s: add %q to http_idempotency.require_key.methods or remove %s from http_retry.methods", it.Value, keys, it.Value, it.Value)
			}
		}
	},
}

// unkeyedOperations groups the document's state-changing operations that
// do not require the key by method: the methods in order of first
// appearance, and for each the quoted operation keys, comma-separated.
func unkeyedOperations(d *boundary.Document, idem *boundary.HTTPIdempotency) (methods []string, keys map[string]string) {
	keys = map[string]string{}
	for i := range d.Operations.Items {
		op := &d.Operations.Items[i]
		// An operation without a method is the schema's finding.
		if !op.StateChanging || op.Method.Value == "" || idem.Requires(op) {
			continue
		}
		m := strings.ToUpper(op.Method.Value)
		if prev, seen := keys[m]; seen {
			keys[m] = prev + ", " + strconv.Quote(op.Key.Value)
			continue
		}
		methods = append(methods, m)
		keys[m] = strconv.Quote(op.Key.Value)
	}
	return methods, keys
}
