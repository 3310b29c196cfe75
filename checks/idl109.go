package checks

import "github.com/idemlint/idemlint/schemas/boundary"

// IDL109 checks that a duplicate arriving while the first attempt still
// runs has a declared, bounded answer.
var idl109 = &Rule{
	ID:       "IDL109",
	Name:     "inflight-explicit",
	Severity: Error,
	Summary:  "idempotency_inflight is explicit: wait with wait_timeout_ms > 0, or reject with status 202 or 409",
	Doc: `A double click or an impatient retry often arrives while the first
attempt is still running. The adapter must never run it a second time; it
must either wait for the first attempt and replay its answer, or answer at
once that the request is still in progress. Which one, and with what bound,
is part of the contract clients code against, so it is declared:
  "policy": "wait" with "wait_timeout_ms" > 0  - the duplicate blocks until
      the first attempt finishes (then gets its stored response) or the
      timeout passes (then gets "status");
  "policy": "reject" with "status": 409 or 202  - 409 Conflict (the IETF
      Idempotency-Key draft) or 202 Accepted (still processing).
A wait without a timeout holds connections for as long as the slowest
attempt; any other status hides the in-progress state from the client.

Fix: declare, for example,
  "idempotency_inflight": {"policy": "wait", "wait_timeout_ms": 3000, "status": 409}
or
  "idempotency_inflight": {"policy": "reject", "status": 409}`,
	CheckDocument: func(p *DocumentPass) {
		pol := p.Doc.Policy
		if pol == nil {
			return
		}
		in := &pol.Inflight
		switch in.State {
		case boundary.Absent:
			p.Missing(pol.Pos, "idempotency_inflight",
				`add idempotency_inflight: "policy": "wait" with "wait_timeout_ms", or "policy": "reject" with "status": 409`)
			return
		case boundary.Invalid:
			return
		}
		switch in.Policy.Value {
		case "":
			if !in.Policy.Present() {
				p.Missing(in.Pos, "policy",
					`add "policy" to idempotency_inflight: "wait" (with wait_timeout_ms) or "reject" (with status 409 or 202)`)
			}
		case "wait":
			switch t := in.WaitTimeoutMS; {
			case !t.Present():
				p.Missing(in.Pos, "wait_timeout_ms", `add "wait_timeout_ms" to idempotency_inflight, e.g. 3000: a waiting duplicate needs a bound`)
			case t.OK() && t.Value == 0:
				// A negative value is IDL002's (minimum 0); zero passes the
				// schema but is a wait that never waits.
				p.Report(t.Pos, "set wait_timeout_ms above 0, e.g. 3000: with 0 a duplicate never waits for the first attempt")
			}
		case "reject":
			if !in.Status.Present() {
				p.Missing(in.Pos, "status", `add "status": 409 (or 202) to idempotency_inflight: a rejected duplicate must say the first attempt is still in progress`)
			}
		}
		// The status is the answer on reject and on a wait timeout alike,
		// so both must tell the client the first attempt is still running.
		if s := in.Status; s.OK() && s.Value != 202 && s.Value != 409 {
			p.Report(s.Pos, "set idempotency_inflight.status to 409 or 202: %d does not tell the client the first attempt is still in progress", s.Value)
		}
	},
}
