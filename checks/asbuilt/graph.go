package asbuilt

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/idemlint/idemlint/checks/chain"
)

// HopNote says, for "idemlint graph", what the hop at index i of chain c
// does as built: for each resource that carries it, its platform, the
// retry of the operation's method (attempts, conditions, and the default
// that gives it, if one does) and the guarded headers it drops; under mesh
// istio, the mesh's retry of a hop no resource binds. "" for a hop that
// is not an edge or that nothing carries as built.
func (d *Deployment) HopNote(c *chain.Chain, i int) string {
	h := c.Hops[i]
	if !h.Kind.IsEdge() || h.Op == nil || !h.Op.Method.OK() || !h.Op.Path.OK() {
		return ""
	}
	d.Wait()
	method := h.Op.Method.Value
	b := d.bind(h.Doc)
	var parts []string
	for _, hop := range b.Hops(method, h.Op.Path.Value) {
		res := hop.Route.Resource
		part := string(res.Platform) + " " + resourceName(res)
		if im := res.Implementation; im != nil {
			part += " (implemented by " + string(im.Name) + ": " + im.By + ")"
		}
		part += " " + retryNote(hop.Retry)
		var dropped []string
		for _, g := range guarded(c) {
			if _, drops := hop.Route.Drops(g.name); drops {
				dropped = append(dropped, g.name)
			}
		}
		if len(dropped) > 0 {
			part += ", drops " + strings.Join(dropped, ", ")
		}
		parts = append(parts, part)
	}
	if r := d.meshDefault(h.Doc, b); r != nil {
		parts = append(parts, "mesh istio "+retryNote(*r))
	}
	return strings.Join(parts, "; ")
}

// retryNote words a retry: "retries up to 3 attempts in all on 503,
// connect_error (default: istio.retries)", or "does not retry".
func retryNote(r Retry) string {
	if !r.Retries() {
		return "does not retry"
	}
	conds := make([]string, len(r.Conditions))
	for i, c := range r.Conditions {
		conds[i] = c.String()
	}
	note := fmt.Sprintf("retries %s on %s", attempts(r), strings.Join(conds, ", "))
	if len(r.OnlyIf) > 0 {
		var gates []string
		for _, g := range r.OnlyIf {
			gates = append(gates, cmp.Or(g.Header, "any request"))
		}
		note += " for requests holding " + strings.Join(gates, " or ")
	}
	if def, ok := r.FromDefault(); ok {
		note += " (default: " + def.ID + ")"
	} else {
		note += " (written)"
	}
	return note
}
