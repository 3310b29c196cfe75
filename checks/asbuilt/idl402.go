package asbuilt

import (
	"cmp"
	"slices"

	"github.com/idemlint/idemlint/checks"
)

// IDL402 catches a proxy that retries more than the edge that declares the
// retry says.
var idl402 = &checks.Rule{
	ID:       "IDL402",
	Name:     "as-built-retry-broader",
	Severity: checks.Error,
	Requires: []checks.Input{Config, hops},
	Summary:  "on an edge that declares a retry, the as-built retry is broader: more attempts in all than max_attempts, or a condition outside its retry_on",
	Doc: `An edge's http_retry is what the owner's policy and the timing rules
(IDL208, IDL213) were written against. A proxy that sends more attempts, or
retries on a condition the edge does not name (a 500 where the edge retries
502, 503 and 504; a reset after the request was sent where it retries only
connection errors), resends writes the owner may already be running and
multiplies the load the chain was sized for.

Reported at the as-built attempts, or at the condition outside retry_on (the
route when a default gives it), the edge's operation related. Attempts that
are implementation-specific are IDL406's; its conditions are still judged.

Before (Gateway API; the edge retries 3 attempts on connect_error, 502, 503, 504):
  retry: {codes: [500, 503], attempts: 4}
After:
  retry: {codes: [503], attempts: 2}`,
	CheckSet: func(p *checks.SetPass) {
		for _, e := range hops.Of(p) {
			method := e.op.Method.Value
			if !retries(e.doc, method) {
				continue // IDL401's
			}
			declared := e.doc.Retry
			var retryOn []string
			for _, t := range declared.RetryOn.Items {
				retryOn = append(retryOn, t.Name)
			}
			for _, h := range e.carriers() {
				r := h.retry
				if !r.Retries() {
					continue
				}
				if max := declared.MaxAttempts; max.OK() && r.AttemptsKnown && (r.Attempts == 0 || int64(r.Attempts) > max.Value) {
					report(p, r.AttemptsFrom.At, e, "the retry the boundary edge declares",
						"%s: %s sends it %s%s, more than the %d attempts in all the edge %s declares (http_retry.max_attempts): lower the attempts",
						e.name(), h.name(), attempts(r), origin(r.AttemptsFrom), max.Value, e.edge())
				}
				// A written condition says it best; a default's, else.
				conds := slices.Clone(r.Conditions)
				slices.SortStableFunc(conds, func(a, b Condition) int { return cmp.Compare(boolInt(a.From.IsDefault()), boolInt(b.From.IsDefault())) })
				for _, c := range conds {
					if c.Within(retryOn) {
						continue
					}
					report(p, c.From.At, e, "the retry the boundary edge declares",
						"%s: %s retries it on %s [%s]%s, which the edge %s does not name in http_retry.retry_on: retry only on what the edge declares, or declare it",
						e.name(), h.name(), c, c.Platform, origin(c.From), e.edge())
					break // one condition per route says it
				}
			}
		}
	},
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
