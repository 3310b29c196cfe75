package checks

import "github.com/idemlint/idemlint/schemas/boundary"

// IDL110 checks the answer to a key reused with a different payload.
var idl110 = &Rule{
	ID:       "IDL110",
	Name:     "payload-mismatch-status",
	Severity: Error,
	Summary:  "idempotency_conflict.on_payload_mismatch is a 4xx with an error_code; a status other than 422 is a warning",
	Doc: `A request whose key matches a stored record but whose fingerprint does
not is not a retry: the client reused a key for a different payload (a bug,
or a key generated per session instead of per action). Replaying the stored
response would silently drop the new request; executing it would break the
promise the key made. The adapter must reject it, and the rejection must be
a client error (4xx) that clients can recognise by its error_code, so they
fix the key instead of retrying.

Reported: a missing idempotency_conflict or on_payload_mismatch, a missing
status or error_code, and a status outside 400-499. A 4xx other than 422 is
a warning: the IETF Idempotency-Key draft answers this case with 422
Unprocessable Content, and 409 is what the draft uses for a request still in
progress, so clients cannot tell the two apart.

Fix: declare
  "idempotency_conflict": {"on_payload_mismatch":
    {"status": 422, "error_code": "idempotency_key_reused"}}`,
	CheckDocument: func(p *DocumentPass) {
		pol := p.Doc.Policy
		if pol == nil {
			return
		}
		c := &pol.Conflict
		switch c.State {
		case boundary.Absent:
			p.Missing(pol.Pos, "idempotency_conflict",
				`add idempotency_conflict: {"on_payload_mismatch": {"status": 422, "error_code": "idempotency_key_reused"}}`)
			return
		case boundary.Invalid:
			return
		}
		m := &c.OnPayloadMismatch
		switch m.State {
		case boundary.Absent:
			p.Missing(c.Pos, "on_payload_mismatch",
				`add "on_payload_mismatch": {"status": 422, "error_code": "idempotency_key_reused"} to idempotency_conflict`)
			return
		case boundary.Invalid:
			return
		}
		switch s := m.Status; {
		case !s.Present():
			p.Missing(m.Pos, "status", `add "status": 422 to on_payload_mismatch`)
		case !s.OK():
		case s.Value < 400 || s.Value > 499:
			p.Report(s.Pos, "set on_payload_mismatch.status to 422: a key reused for a different payload is a client error, and %d does not say so", s.Value)
		case s.Value != 422:
			p.Warn(s.Pos, "use 422 instead of %d for on_payload_mismatch.status: the IETF Idempotency-Key draft answers a key reused for a different payload with 422", s.Value)
		}
		if !m.ErrorCode.Present() {
			p.Missing(m.Pos, "error_code",
				`add "error_code" to on_payload_mismatch, e.g. "idempotency_key_reused": clients need a stable code to tell this conflict from other client errors`)
		}
	},
}
