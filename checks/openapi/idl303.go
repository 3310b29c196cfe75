package openapi

import (
	"strconv"

	"github.com/idemlint/idemlint/checks"
)

// IDL303 makes the API description list the answers of the idempotency
// layer, so clients handle them instead of treating them as failures.
var idl303 = &checks.Rule{
	ID:         "IDL303",
	Name:       "openapi-declares-refusals",
	Severity:   checks.Warning,
	Requires:   []checks.Input{Description, browserEdges},
	AcrossSets: true,
	Summary:    "the refusals the chain's owner policy can answer are declared as responses of the OpenAPI operation",
	Doc: `An idempotent API answers more than success and validation errors: the owner
policy refuses a request without a valid key (http_idempotency.on_missing),
a reused key with another payload (idempotency_conflict.on_payload_mismatch)
and, with "policy": "reject", a duplicate of a request still running
(idempotency_inflight.status). A client that does not know these statuses
treats a 409 "still processing" as a failure and gives up, or retries a 422
forever; the IETF idempotency-key draft asks a resource to publish them.

Reported at the "responses" of an OpenAPI operation reached by a
browser_to_bff operation whose chain is complete and whose owner requires
the key, once per status the owner can answer that the operation does not
declare. A response of the status's class ("4XX") counts, and so does
"default", which declares every status (Stripe answers every refusal with
its "default" error response).

Fix: add the responses, typically as shared components/responses with a
problem+json body, e.g. "409": {$ref: "#/components/responses/InFlight"}.`,
	CheckSet: func(p *checks.SetPass) {
		type seen struct {
			op     *Operation
			status int
		}
		reported := map[seen]bool{}
		for _, b := range browserEdges.Of(p).ops {
			if len(b.described) == 0 {
				continue
			}
			refusals := browserEdges.Of(p).ownerRefusals(b)
			for _, o := range b.described {
				for _, r := range refusals {
					s := seen{o, r.status}
					if reported[s] || o.Declares(r.status) {
						continue
					}
					reported[s] = true
					reportAt(p, o.ResponsesAt, o.Pointer+"/responses", "%s: declare response %s: %s answers it %s",
						o.Name(), strconv.Itoa(r.status), r.owner, r.why)
				}
			}
		}
	},
}
