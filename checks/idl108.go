package checks

import "github.com/idemlint/idemlint/schemas/boundary"

// IDL108 checks that a duplicate of a finished request gets the first
// attempt's answer, and that the policy says so rather than leaving it to
// each implementation.
var idl108 = &Rule{
	ID:       "IDL108",
	Name:     "replay-explicit",
	Severity: Error,
	Summary:  "idempotency_replay is explicit: on_completed stored_response, same_status and same_body true, on_failed set",
	Doc: `A client retries because it did not see the first answer. The retry
must therefore get that answer: the stored status and the stored body,
byte for byte. When replays are left to each implementation they differ (one
returns 200 instead of 201, another an empty body, a third runs the operation
again), and clients that handle only one of them break on the others.

Required, in idempotency_replay:
  "on_completed": "stored_response"  - replay, never re-execute, a success;
  "same_status": true, "same_body": true  - the replay is the stored answer;
  "on_failed"  - what a duplicate of a failed attempt gets: "stored_response"
      (the failure again) or "reexecute" (run it again); either is a choice,
      but it must be written down.

Fix: declare
  "idempotency_replay": {"on_completed": "stored_response", "same_status": true,
    "same_body": true, "on_failed": "stored_response",
    "replayed_header": "idempotent-replayed"}
The optional replayed_header lets clients and logs tell a replay from a
first execution without changing the status or body.`,
	CheckDocument: func(p *DocumentPass) {
		pol := p.Doc.Policy
		if pol == nil {
			return
		}
		r := &pol.Replay
		switch r.State {
		case boundary.Absent:
			p.Missing(pol.Pos, "idempotency_replay",
				`add idempotency_replay with "on_completed": "stored_response", "same_status": true, "same_body": true and "on_failed"`)
			return
		case boundary.Invalid:
			return
		}
		if !r.OnCompleted.Present() {
			p.Missing(r.Pos, "on_completed",
				`add "on_completed": "stored_response" to idempotency_replay: a duplicate of a completed request must get the stored response, not run again`)
		}
		for _, f := range []struct {
			field, part string
			value       boundary.Bool
		}{{"same_status", "status", r.SameStatus}, {"same_body", "body", r.SameBody}} {
			switch v := f.value; {
			case !v.Present():
				p.Missing(r.Pos, f.field, "add %q: true to idempotency_replay: a replay must return the first attempt's %s", f.field, f.part)
			case v.OK() && !v.Value:
				p.Report(v.Pos, "set %s to true: a replay with another %s than the first attempt breaks clients that retried", f.field, f.part)
			}
		}
		if !r.OnFailed.Present() {
			p.Missing(r.Pos, "on_failed",
				`add "on_failed" to idempotency_replay: "stored_response" replays a failure, "reexecute" runs the operation again`)
		}
	},
}
