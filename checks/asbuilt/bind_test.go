package asbuilt

import (
	"fmt"
	"strings"
	"testing"
)

const bindManifests = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: orders, namespace: shop}
spec:
  hosts: [orders]
  http:
  - match: [{uri: {prefix: /api/orders}, method: {exact: POST}}]
    route: [{destination: {host: orders.shop.svc.cluster.local}}]
    retries: {attempts: 1, retryOn: connect-failure}
  - route: [{destination: {host: legacy}}]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: orders, namespace: staging}
spec:
  hosts: [orders]
  http:
  - route: [{destination: {host: orders.staging.svc.cluster.local}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: edge, namespace: shop}
spec:
  rules:
  - matches:
    - {path: {type: PathPrefix, value: /api/carts}, method: POST}
    - {path: {type: PathPrefix, value: /api/refunds}, method: POST}
    - {path: {type: PathPrefix, value: /api/carts}, method: GET}
    backendRefs: [{name: carts-gateway}]
`

func TestBind(t *testing.T) {
	s := Parse("m.yaml", []byte(bindManifests))
	if len(s.Errors)+len(s.Problems) > 0 {
		t.Fatal(s.Errors, s.Problems)
	}
	names := func(rs []*Resource) string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name.Value))
		}
		return strings.Join(out, ", ")
	}

	// Implicit, one namespace: the HTTPRoute to carts-gateway.
	b := s.Bind("carts-gateway", nil, AnyTraffic)
	if names(b.Resources) != "HTTPRoute shop/edge" || len(b.Ambiguous) > 0 {
		t.Errorf("carts-gateway: bound %q, ambiguous %q", names(b.Resources), names(b.Ambiguous))
	}
	hops := b.Hops("POST", "/api/carts/{id}/items")
	if len(hops) != 1 || hops[0].Match.At.Line != 26 || hops[0].Retry.Attempts != 1 {
		t.Errorf("POST /api/carts/{id}/items: %+v", hops)
	}
	strays := b.Strays([]Operation{{"POST", "/api/carts/{id}/items"}, {"GET", "/api/carts"}})
	if len(strays) != 1 || strays[0].Match.At.Line != 27 {
		t.Errorf("strays: %+v; want the POST /api/refunds match", strays)
	}

	// Implicit over two namespaces: ambiguous, none bound.
	b = s.Bind("orders", nil, AnyTraffic)
	if len(b.Resources) != 0 || names(b.Ambiguous) != "VirtualService shop/orders, VirtualService staging/orders" {
		t.Errorf("orders: bound %q, ambiguous %q", names(b.Resources), names(b.Ambiguous))
	}

	// Explicit: only what as_built names, and nothing implicit.
	b = s.Bind("orders", []Ref{{Kind: "VirtualService", Name: "orders", Namespace: "shop"}, {Kind: "HTTPRoute", Name: "gone"}}, AnyTraffic)
	if names(b.Resources) != "VirtualService shop/orders" || len(b.Unmatched) != 1 || b.Unmatched[0] != 1 {
		t.Errorf("as_built: bound %q, unmatched %v", names(b.Resources), b.Unmatched)
	}
	hops = b.Hops("POST", "/api/orders")
	if len(hops) != 1 || hops[0].Retry.Attempts != 2 || hops[0].Retry.ResendsAfterReceipt() {
		t.Errorf("POST /api/orders: %+v", hops)
	}
	// A write the first route does not name goes to the catch-all route,
	// which sends to legacy, not orders: explicit bindings take it anyway.
	hops = b.Hops("PUT", "/api/orders/{id}")
	if len(hops) != 1 || hops[0].Route.Backends[0].Value != "legacy" || hops[0].Retry.Attempts != 3 {
		t.Errorf("PUT /api/orders/{id}: %+v", hops)
	}
	// An empty as_built binds nothing, not even implicitly.
	if b := s.Bind("carts-gateway", []Ref{}, AnyTraffic); len(b.Resources)+len(b.Ambiguous) != 0 || !b.Explicit {
		t.Errorf("as_built []: bound %q, ambiguous %q", names(b.Resources), names(b.Ambiguous))
	}
	// Implicitly bound, the same request does not reach "orders".
	b = Binding{To: "orders", Resources: b.Resources}
	if hops := b.Hops("PUT", "/api/orders/{id}"); len(hops) != 0 {
		t.Errorf("implicit PUT /api/orders/{id}: %+v", hops)
	}
}

func TestIstioDefaultRetry(t *testing.T) {
	at := Pos{File: ".idemlint.json", Line: 3, Column: 13}
	r := Parse("none.yaml", nil).IstioDefaultRetry(at)
	if r.Attempts != 3 || r.AttemptsFrom.Default != istioRetries || r.AttemptsFrom.At != at {
		t.Errorf("built-in: %+v", r)
	}
	mesh := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\ndata:\n  mesh: |\n    defaultHttpRetryPolicy:\n      attempts: 0\n"
	r = Parse("mesh.yaml", []byte(mesh)).IstioDefaultRetry(at)
	if r.Retries() || r.AttemptsFrom.At.Line != 7 || r.AttemptsFrom.At.Column != 17 {
		t.Errorf("mesh attempts 0: %+v", r)
	}
}
