package checks

import (
	"fmt"
	"strconv"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// conservativeRetryStatus are the statuses after which the request most
// likely did not run (rate limited, or refused before the upstream answered).
var conservativeRetryStatus = map[int]bool{429: true, 502: true, 503: true, 504: true}

// conservativeRetryOnHint ends every retry_on message.
const conservativeRetryOnHint = "retry only connect_error, timeout, 429, 502, 503, 504"

// IDL104 keeps retries on the edges, which do not own idempotency,
// validate-only and limited to failures that leave no side effect behind.
var idl104 = &Rule{
	ID:       "IDL104",
	Name:     "edge-retry-validate-only",
	Severity: Error,
	Summary:  "retry on an edge is validate-only: mode validate_only, retry_on only connect_error, timeout, 429, 502, 503, 504",
	Doc: `Only the adapter completes idempotency; the BFF and the gateway merely check
that the key is there and pass it on. A retry on such an edge must therefore
be validate-only: resend only a request whose key was validated, and only
after a failure that says the request most likely did not take effect, so the
adapter's record, not luck, decides whether a duplicate runs. A 500 can come
back after the side effect happened (the handler charged the card, then
crashed); any 4xx other than 429 is the server's answer to this request and
repeating it changes nothing. Retrying on those multiplies calls to the
adapter and to the external systems behind it.

Reported on browser_to_bff, bff_to_gateway and gateway_to_adapter documents
whose http_retry is enabled:
  - mode absent or "none";
  - each retry_on entry other than connect_error, timeout, 429, 502, 503 and
    504 (as integers or numeric strings).

Fix: set "mode": "validate_only" and remove the entries the message names.`,
	CheckDocument: func(p *DocumentPass) {
		r := &p.Doc.Retry
		if !p.Doc.Kind.IsEdge() || !r.OK() || !r.Enabled.Value {
			return
		}
		// Besides "validate_only" the schema admits only "none"; any other
		// value is already an IDL002 finding.
		switch mode := r.Mode; {
		case !mode.Present():
			p.Missing(r.Pos, "mode", `add "mode": "validate_only" to http_retry: this edge does not own idempotency, so it may only resend requests whose key it validated`)
		case mode.Value == "none":
			p.Report(mode.Pos, `set http_retry.mode to "validate_only" instead of "none": this edge does not own idempotency, so it may only resend requests whose key it validated`)
		}
		for _, t := range r.RetryOn.Items {
			if reason := retryStatusRisk(t.Status); t.OK() && reason != "" {
				p.Report(t.Pos, "remove %s from retry_on: %s; %s", retryOnEntry(t), reason, conservativeRetryOnHint)
			}
		}
	},
}

// retryStatusRisk says why retrying on a retry_on status may duplicate a
// side effect, or returns "" when the status is conservative. The named
// conditions (connect_error, timeout) come with status 0 and are
// conservative; other names and numbers outside 100-599 are the schema's
// findings.
func retryStatusRisk(status int) string {
	switch {
	case status < 100 || status > 599 || conservativeRetryStatus[status]:
		return ""
	case status >= 500:
		return fmt.Sprintf("a %d may mean the side effect happened", status)
	case status >= 400:
		return fmt.Sprintf("a %d is the server's answer to this request, not a transient failure", status)
	}
	return fmt.Sprintf("a %d is not a failure", status)
}

// retryOnEntry renders an entry as written: 500 or "500".
func retryOnEntry(t boundary.RetryTrigger) string {
	if t.Quoted {
		return strconv.Quote(t.Name)
	}
	return t.Name
}
