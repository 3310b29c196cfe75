package checks

import (
	"github.com/idemlint/idemlint/schemas/boundary"
)

// Values the browser boundary must answer a keyless state-changing request
// with (IDL101).
const (
	browserOnMissingAction    = "reject"
	browserOnMissingStatus    = 400
	browserOnMissingErrorCode = "idempotency_key_required"
)

// IDL101 makes the BFF's inbound side refuse a state-changing browser
// request that carries no key, with one agreed answer.
var idl101 = &Rule{
	ID:       "IDL101",
	Name:     "browser-requires-key",
	Severity: Error,
	Subject:  "state-changing operation without a required key",
	Summary:  "browser_to_bff requires the key for every state-changing operation and rejects a keyless one with 400 idempotency_key_required",
	Doc: `The browser generates the idempotency key, and the BFF is the first place
that can insist on it. If the browser_to_bff boundary does not require the key
for a state-changing operation, a double click or an automatic resend arrives
as two keyless requests, and nothing downstream can tell them apart: the order
is created twice. If the requirement exists only further down (at the gateway
or the adapter), clients meet it later as surprise 400s after a change they
did not make.

Reported on browser_to_bff documents that have a state-changing operation
(POST, PUT, PATCH, DELETE, or state_changing: true):
  - an operation that http_idempotency.require_key does not cover, neither by
    its method (require_key.methods) nor by its operation_key
    (require_key.operations), including when require_key is absent;
  - on_missing absent or incomplete, or with a status other than 400 or an
    error_code other than "idempotency_key_required". The browser needs one
    stable answer it can recognise and fix by generating a key.

Fix: declare the requirement and the answer explicitly, e.g.
  "require_key": {"methods": ["POST", "PUT", "PATCH", "DELETE"]},
  "on_missing": {"action": "reject", "status": 400,
                 "error_code": "idempotency_key_required"}
An absent http_idempotency is reported by IDL002.`,
	CheckDocument: func(p *DocumentPass) {
		idem := &p.Doc.Idempotency
		if p.Doc.Kind != boundary.BrowserToBFF || !idem.OK() {
			return
		}
		readable := idem.RequireKey.Readable()
		stateChanging := false
		for i := range p.Doc.Operations.Items {
			op := &p.Doc.Operations.Items[i]
			if !op.StateChanging {
				continue
			}
			stateChanging = true
			if readable && !idem.Requires(op) {
				reportUnkeyedBrowserOperation(p, idem, op)
			}
		}
		if stateChanging {
			checkBrowserOnMissing(p, idem)
		}
	},
}

// reportUnkeyedBrowserOperation reports a state-changing operation the
// browser boundary lets through without a key.
func reportUnkeyedBrowserOperation(p *DocumentPass, idem *boundary.HTTPIdempotency, op *boundary.Operation) {
	if !idem.RequireKey.Present() {
		p.Missing(idem.Pos, "require_key", "operation %q (%s) is state-changing but no key is required: add require_key with %q in methods or %q in operations", op.Key.Value, op.Method.Value, op.Method.Value, op.Key.Value)
		return
	}
	p.Report(idem.RequireKey.Pos, "operation %q (%s) is state-changing but does not require the key: add %q to require_key.methods or %q to require_key.operations", op.Key.Value, op.Method.Value, op.Method.Value, op.Key.Value)
}

// checkBrowserOnMissing reports an on_missing that is absent or does not
// give the agreed answer. Values of the wrong type are left to the schema.
func checkBrowserOnMissing(p *DocumentPass, idem *boundary.HTTPIdempotency) {
	om := &idem.OnMissing
	switch om.State {
	case boundary.Absent:
		p.Missing(idem.Pos, "on_missing", `add "on_missing": {"action": %q, "status": %d, "error_code": %q} to http_idempotency`, browserOnMissingAction, browserOnMissingStatus, browserOnMissingErrorCode)
		return
	case boundary.Invalid:
		return
	}
	// The schema's enum admits only "reject", so a present action is either
	// right or already an IDL002 finding: only its absence is ours.
	if !om.Action.Present() {
		p.Missing(om.Pos, "action", `add "action": %q to on_missing`, browserOnMissingAction)
	}
	switch status := om.Status; {
	case !status.Present():
		p.Missing(om.Pos, "status", `add "status": %d to on_missing`, browserOnMissingStatus)
	case status.OK() && status.Value != browserOnMissingStatus:
		p.Report(status.Pos, "set on_missing.status to %d instead of %d: a browser request without the key is a client error the client fixes by sending one", browserOnMissingStatus, status.Value)
	}
	switch code := om.ErrorCode; {
	case !code.Present():
		p.Missing(om.Pos, "error_code", `add "error_code": %q to on_missing`, browserOnMissingErrorCode)
	case code.OK() && code.Value != browserOnMissingErrorCode:
		p.Report(code.Pos, "set on_missing.error_code to %q instead of %q: clients recognise a missing key by this code", browserOnMissingErrorCode, code.Value)
	}
}
