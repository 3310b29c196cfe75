package openapi

import (
	"strings"

	"github.com/idemlint/idemlint/checks"
)

// IDL302 makes the API description tell clients to send the key wherever
// the browser edge requires it.
var idl302 = &checks.Rule{
	ID:         "IDL302",
	Name:       "openapi-declares-key",
	Severity:   checks.Error,
	Requires:   []checks.Input{Description, browserEdges},
	AcrossSets: true,
	Summary:    "every key-required boundary operation declares the key header as a required header parameter in OpenAPI",
	Doc: `Client developers, SDK generators and API gateways read the OpenAPI
description, not the boundary set. If the browser_to_bff edge requires the
idempotency key for an operation but the description does not declare it,
generated clients never send it: every request is refused with 400, or, if
someone relaxes the edge to make them pass, retries execute twice.

Reported at the OpenAPI operation an operation of a browser_to_bff edge
reaches (matched as IDL301 does) when the edge requires the key for it and
the operation has no header parameter of the key header's name (compared
case-insensitively; parameters of the path item count, and so does a $ref to
a shared components/parameters entry), or at the parameter when it is
declared but not "required: true". A description that carries its key in
the request body (an "idempotency_key" property, and no header parameter
that speaks of idempotency) is not reported: one note says so.

Fix: declare the header once under components/parameters and refer to it:
  components:
    parameters:
      IdempotencyKey:
        {name: x-idempotency-key, in: header, required: true,
         schema: {type: string, maxLength: 255}}
  ... parameters: [{$ref: "#/components/parameters/IdempotencyKey"}]`,
	CheckSet: func(p *checks.SetPass) {
		type seen struct {
			op     *Operation
			header string
		}
		reported := map[seen]bool{}
		if Description.Of(p).BodyKey != "" {
			return
		}
		for _, b := range browserEdges.Of(p).ops {
			if b.header == "" {
				continue
			}
			for _, o := range b.described {
				s := seen{o, strings.ToLower(b.header)}
				if reported[s] {
					continue
				}
				switch param, ok := o.Header(b.header); {
				case !ok:
					reported[s] = true
					reportAt(p, o.At, o.Pointer, "%s: header %q not declared: the browser_to_bff edge %s requires the key for %s: add a header parameter %q with required: true (a $ref to a shared components/parameters entry counts)",
						o.Name(), b.header, b.edge(), b.describe(), b.header)
				case !param.Required:
					reported[s] = true
					reportAt(p, param.At, param.Pointer, "%s: header parameter %q declared optional: mark it required (required: true): the browser_to_bff edge %s requires the key for %s",
						o.Name(), param.Name, b.edge(), b.describe())
				}
			}
		}
	},
}
