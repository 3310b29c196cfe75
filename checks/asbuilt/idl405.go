package asbuilt

import (
	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL405 catches a CORS answer that makes the browser leave the key out.
var idl405 = &checks.Rule{
	ID:       "IDL405",
	Name:     "as-built-cors-allows-key",
	Severity: checks.Error,
	Requires: []checks.Input{Config, hops},
	Summary:  "a CORS configuration read for a browser_to_bff hop does not allow the key header, or answers * for allowed headers with credentials",
	Doc: `A browser sends a custom header across origins only when the preflight's
Access-Control-Allow-Headers lists it. ingress-nginx's default
cors-allow-headers list holds no idempotency key header, so with
enable-cors and nothing else the preflight of every write fails, or the
front end learns to drop the key. An answer of the literal "*" does not
cover requests with credentials (cookies): browsers then read it as the
header named "*" (Fetch standard), so "*" with allowCredentials is the same
failure on Istio and ingress-nginx. Gateway API's CORS filter echoes the
requested headers in that case, which is fine.

Reported at the allowed headers (the enable-cors annotation when the
default list applies), or at the "*", for each browser_to_bff operation
that requires the key; a hop without a CORS configuration read is not
judged.

Before (ingress-nginx):
  nginx.ingress.kubernetes.io/enable-cors: "true"
After:
  nginx.ingress.kubernetes.io/enable-cors: "true"
  nginx.ingress.kubernetes.io/cors-allow-headers: "Content-Type, Authorization, X-Idempotency-Key"`,
	CheckSet: func(p *checks.SetPass) {
		seen := map[*CORS]bool{}
		for _, e := range hops.Of(p) {
			if e.doc.Kind != boundary.BrowserToBFF || !e.doc.Requires(e.op) {
				continue
			}
			key := e.doc.Idempotency.KeyHeader()
			for _, h := range e.hops {
				c := h.Route.CORS
				if c == nil || seen[c] {
					continue
				}
				res := h.Route.Resource
				star, wildcard := c.Wildcard()
				switch {
				case wildcard && c.Credentials && res.Platform != GatewayAPI:
					seen[c] = true
					report(p, star.At, e, "the browser edge that requires "+key,
						"%s: %s answers the preflight with Access-Control-Allow-Headers * and credentials%s, which browsers read as the header named \"*\": list %s instead",
						e.name(), resourceName(res), origin(c.CredentialsFrom), key)
				case !c.Allows(key):
					seen[c] = true
					report(p, c.AllowHeadersFrom.At, e, "the browser edge that requires "+key,
						"%s: %s does not allow %s in its CORS answer%s, so the browser's preflight of the write fails: add it to the allowed headers",
						e.name(), resourceName(res), key, origin(c.AllowHeadersFrom))
				}
			}
		}
	},
}
