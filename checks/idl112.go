package checks

import (
	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL112 checks that the key is logged, so a duplicate can be traced.
var idl112 = &Rule{
	ID:       "IDL112",
	Name:     "key-logged",
	Severity: Warning,
	Summary:  "observability.log_fields includes idempotency_key",
	Doc: `When a customer reports a double charge, the first question is whether
the two requests were one user action retried or two actions. The request id
cannot answer it: every attempt, and every replay, may get a new one. The
idempotency key is the one value shared by an action and all its retries, so
the adapter must log it with every request; then a search for the key shows
the first execution, each replay and any conflict.

Reported (as a warning): a missing observability section, a missing
log_fields, and log_fields without "idempotency_key".

Fix: declare
  "observability": {"log_fields": ["idempotency_key", "request_id",
    "operation_key", "tenant_id"], "request_id_header": "x-request-id"}`,
	CheckDocument: func(p *DocumentPass) {
		pol := p.Doc.Policy
		if pol == nil {
			return
		}
		o := &pol.Observe
		switch o.State {
		case boundary.Absent:
			p.Missing(pol.Pos, "observability",
				`add observability with "log_fields": ["idempotency_key", "request_id"]: the key is what ties a duplicate to its first attempt`)
			return
		case boundary.Invalid:
			return
		}
		switch fields := o.LogFields; {
		case !fields.Present():
			p.Missing(o.Pos, "log_fields", `add "log_fields": ["idempotency_key", "request_id"] to observability`)
		case fields.OK() && !fields.Contains("idempotency_key"):
			p.Report(fields.Pos, `add "idempotency_key" to observability.log_fields: a replay gets a new request id, so only the key ties a duplicate to its first attempt`)
		}
	},
}
