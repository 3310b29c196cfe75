package asbuilt

import (
	"slices"
	"strconv"

	"github.com/idemlint/idemlint/checks"
)

// IDL401 catches a proxy that resends a write the boundary set says is
// sent once.
var idl401 = &checks.Rule{
	ID:       "IDL401",
	Name:     "as-built-resends-write",
	Severity: checks.Error,
	Requires: []checks.Input{Config, hops},
	Summary:  "the as-built hop resends a state-changing operation after receipt while its boundary edge does not retry it",
	Doc: `A proxy that retries a request the upstream already received may run a
write twice: Istio retries every route twice by default, 503 included, for
any method (istio/istio#50506 is a double payout caused by exactly this);
ingress-nginx retries PUT and DELETE on "error timeout" up to 3 tries. A
boundary edge without http_retry (or with enabled: false, or without the
method in http_retry.methods) says the hop sends the operation once; the
configuration that carries the hop must agree, defaults included.

Reported at the as-built retry condition that resends after receipt (the
route itself when a platform default applies; the edge document for an
unbound hop under --mesh istio), the edge's operation related. Retries on
connection errors alone (the request was never sent) never fire.

Before (Istio, no retries written: 2 retries on 503):
  http:
  - route: [{destination: {host: orders-gw}}]
After:
  http:
  - route: [{destination: {host: orders-gw}}]
    retries: {attempts: 0}
or declare the retry on the edge (http_retry with the key required, IDL103).`,
	CheckSet: func(p *checks.SetPass) {
		for _, e := range hops.Of(p) {
			method := e.op.Method.Value
			if retries(e.doc, method) {
				continue
			}
			for _, h := range e.carriers() {
				c, ok := resend(h.retry)
				if !ok {
					continue
				}
				if h.route != nil {
					report(p, c.From.At, e, "the boundary edge that does not retry "+method,
						"%s: %s resends it after the upstream received it (%s, on %s [%s]%s), but the edge %s does not retry it: turn this route's retry off, or declare the retry on the edge with the key required",
						e.name(), h.name(), attempts(h.retry), c, c.Platform, origin(c.From), e.edge())
					continue
				}
				// At the mesh's defaultHttpRetryPolicy, the "mesh" of
				// .idemlint.json, or the operation when --mesh named it.
				report(p, c.From.At, e, "the edge operation the mesh's retry carries",
					"%s: no resource read routes %s, so under mesh istio Istio's default retry resends it after the upstream received it (%s, on %s [%s]%s), but the edge does not retry it: give the hop a VirtualService route with retries: {attempts: 0}, or set the mesh's defaultHttpRetryPolicy",
					e.name(), e.edge(), attempts(h.retry), c, c.Platform, origin(c.From))
			}
		}
	},
}

// resend returns a condition on which r resends after receipt: the first
// written one, else the first a default gives.
func resend(r Retry) (Condition, bool) {
	if !r.ResendsAfterReceipt() {
		return Condition{}, false
	}
	afterReceipt := func(c Condition) bool { return c.Kind != ConnectError }
	if i := slices.IndexFunc(r.Conditions, func(c Condition) bool { return afterReceipt(c) && !c.From.IsDefault() }); i >= 0 {
		return r.Conditions[i], true
	}
	return r.Conditions[slices.IndexFunc(r.Conditions, afterReceipt)], true
}

// attempts says how often r sends a request: "up to 3 attempts in all".
func attempts(r Retry) string {
	switch {
	case !r.AttemptsKnown:
		return "an implementation-specific number of attempts"
	case r.Attempts == 0:
		return "without limit"
	}
	return "up to " + strconv.Itoa(r.Attempts) + " attempts in all"
}
