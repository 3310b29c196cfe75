package checks

import (
	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL102 keeps the key header on every allowlist it must pass through.
var idl102 = &Rule{
	ID:       "IDL102",
	Name:     "key-header-allowlisted",
	Severity: Error,
	Subject:  "allowlist of the document",
	Summary:  "the key header is in cors_allowed_headers, header_to_allow_inbound and header_to_allow_outbound of every edge carrying a state-changing operation",
	Doc: `The key only protects the adapter if it arrives there. Each hop filters
headers through allowlists, and a list that forgets the key header drops it
silently: the request still succeeds, but every hop after it sees a keyless
request, so a resend or a retry executes the side effect twice downstream.
In the browser, a key header missing from CORS makes the preflight fail.

Reported on edges that carry a state-changing operation, for the key header
(http_idempotency.header, default "x-idempotency-key"; names compare
case-insensitively):
  - cors_allowed_headers (browser_to_bff),
  - header_to_allow_inbound (every edge),
  - header_to_allow_outbound (bff_to_gateway and gateway_to_adapter),
when the list is absent or does not name the header. "*" allows every
header, except that on cors_allowed_headers it is a warning: browsers do not
honour "*" for requests with credentials, so list the key header explicitly.

Fix: add the key header to the list the message names.`,
	CheckDocument: func(p *DocumentPass) {
		d := p.Doc
		if !d.Kind.IsEdge() || !d.Operations.StateChanging() {
			return
		}
		header := d.Idempotency.KeyHeader()
		inbound := keyAllowlist{"header_to_allow_inbound", d.HeaderAllowInbound, "otherwise the receiving side drops the key and duplicates downstream execute twice"}
		outbound := keyAllowlist{"header_to_allow_outbound", d.HeaderAllowOutbound, "otherwise the key is not forwarded and duplicates downstream execute twice"}
		if d.Kind == boundary.BrowserToBFF {
			cors := keyAllowlist{corsHeadersField, d.CORSAllowedHeaders, "otherwise the browser's preflight blocks every request that sends it"}
			checkKeyAllowlist(p, cors, header)
			checkKeyAllowlist(p, inbound, header)
			return
		}
		checkKeyAllowlist(p, inbound, header)
		checkKeyAllowlist(p, outbound, header)
	},
}

const corsHeadersField = "cors_allowed_headers"

// keyAllowlist is one header list of an edge and what happens to the key when
// the list lacks it.
type keyAllowlist struct {
	field string
	list  boundary.StringList
	drop  string
}

func checkKeyAllowlist(p *DocumentPass, a keyAllowlist, header string) {
	switch a.list.State {
	case boundary.Absent:
		p.Missing(p.Doc.Root.Pos, a.field, "add %s with %q: %s", a.field, header, a.drop)
		return
	case boundary.Invalid:
		return // the schema's finding
	}
	if _, ok := a.list.FindFold(header); ok {
		return
	}
	if star, ok := a.list.FindFold("*"); ok {
		if a.field == corsHeadersField {
			p.Warn(star.Pos, `list %q in %s explicitly instead of "*": browsers do not honour "*" on requests with credentials, so their preflight fails`, header, a.field)
		}
		return
	}
	p.Report(a.list.Pos, "add %q to %s: %s", header, a.field, a.drop)
}
