package openapi

import (
	"strings"

	"github.com/idemlint/idemlint/checks"
)

// IDL301 makes every state-changing operation of the API description go
// through a described browser edge.
var idl301 = &checks.Rule{
	ID:         "IDL301",
	Name:       "openapi-operation-has-edge",
	Severity:   checks.Error,
	Requires:   []checks.Input{Description, browserEdges},
	AcrossSets: true,
	Summary:    "every state-changing OpenAPI operation (POST, PUT, PATCH, DELETE) has a browser_to_bff operation with the same method and path",
	Doc: `The OpenAPI description is the contract clients code against; the boundary
set is how its requests travel to the adapter that owns their idempotency
key. A state-changing operation that is in the contract but on no
browser_to_bff edge has no declared key handling at all: nobody checked that
the key is required, forwarded and owned exactly once, so a retried request
may execute twice.

Matching: the same method, and the edge's path equal to a server base path
of the description (servers[].url, variables at their defaults) followed by
the operation's path template; parameter names do not matter, so
"/api/orders/{id}" matches "/orders/{order_id}" under a server ".../api".
Reported at the operation in the OpenAPI file.

Fix: add the operation (method and the full path) to the browser_to_bff
document of the BFF that serves it, and follow its chain to the adapter;
"idemlint init --from-openapi" writes a starter set. Or remove the operation
from the description if the API no longer offers it.`,
	CheckSet: func(p *checks.SetPass) {
		carried := map[*Operation]bool{}
		for _, b := range browserEdges.Of(p).ops {
			for _, o := range b.described {
				carried[o] = true
			}
		}
		for _, o := range Description.Of(p).Operations {
			if !o.StateChanging() || carried[o] {
				continue
			}
			paths := make([]string, len(o.BasePaths))
			for i, base := range o.BasePaths {
				paths[i] = base + o.Template
			}
			reportAt(p, o.At, o.Pointer, `%s changes state but no browser_to_bff edge carries it: add {"method": %q, "path": %q} to the operations of the edge that serves it`,
				o.Name(), o.Method, strings.Join(paths, `" or "`))
		}
	},
}
