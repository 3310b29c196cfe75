package openapi

import (
	"strings"

	"github.com/idemlint/idemlint/checks/pathmatch"
)

// Find returns the operations of the description that a browser request
// with method to path (a boundary operation's path, e.g. "/api/orders/{id}")
// reaches: the same method, and the path equal to a server base path
// followed by the operation's template, where parameter names do not
// matter ("/orders/{id}" matches "/orders/{order_id}").
func (api *API) Find(method, path string) []*Operation { return api.routes[Route(method, path)] }

// Route is what a request matches operations by: its method and the shape
// of its path, "POST /orders/{}".
func Route(method, path string) string { return strings.ToUpper(method) + " " + pathmatch.Shape(path) }

// Routes are the routes of the operation, one per base path:
// "POST /api/orders/{}".
func (o *Operation) Routes() []string {
	out := make([]string, len(o.BasePaths))
	for i, base := range o.BasePaths {
		out[i] = Route(o.Method, base+o.Template)
	}
	return out
}

// index maps each route to its operations, so matching a boundary set
// costs one lookup per boundary operation.
func (api *API) index() {
	api.routes = map[string][]*Operation{}
	for _, o := range api.Operations {
		for _, r := range o.Routes() {
			api.routes[r] = append(api.routes[r], o)
		}
	}
}
