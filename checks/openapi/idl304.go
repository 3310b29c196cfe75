package openapi

import (
	"path/filepath"

	"github.com/idemlint/idemlint/checks"
)

// IDL304 finds browser edges that carry operations the API description
// does not have.
var idl304 = &checks.Rule{
	ID:         "IDL304",
	Name:       "edge-operation-in-openapi",
	Severity:   checks.Warning,
	Requires:   []checks.Input{Description, browserEdges},
	AcrossSets: true,
	Summary:    "a browser_to_bff operation that no OpenAPI operation describes",
	Doc: `Every operation a browser can call should be in the contract. An operation on
a browser_to_bff edge that the OpenAPI description lacks is either an
undocumented endpoint (clients discover it by accident, without the key
requirement) or a leftover of a renamed or removed one, whose policy now
protects nothing while the real path goes unchecked (IDL301 then reports
it from the other side).

Matching is as for IDL301. Reported at the operation in the boundary
document, where an "x-idemlint-ignore" entry can accept it (an internal
endpoint the public description leaves out on purpose).

Fix: add the operation to the description, correct the edge's method or
path, or remove the operation from the edge.`,
	CheckSet: func(p *checks.SetPass) {
		for _, b := range browserEdges.Of(p).ops {
			if len(b.described) == 0 {
				p.Report(b.doc, b.at, "", "%s is described by no operation of %s: add it to the API description, correct this method or path, or remove the operation",
					b.describe(), filepath.Base(Description.Of(p).Path))
			}
		}
	},
}
