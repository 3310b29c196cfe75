package asbuilt

import (
	"cmp"
	"strconv"

	"go.yaml.in/yaml/v4"

	"github.com/idemlint/idemlint/checks/pathmatch"
)

// Gateway API (docs/as-built.md, Reading the configuration): an
// HTTPRoute's rules and parents, and the
// Gateways and GatewayClasses that say who implements them
// (implementation.go). Field names are those of sigs.k8s.io/gateway-api
// apis/v1 (retry: GEP-1731).

// GatewayAPI is the platform's name in findings.
const GatewayAPI Platform = "gateway-api"

// gatewayAPI is the platform as platforms lists it.
var gatewayAPI = &platform{
	name: GatewayAPI,
	kinds: []kindReader{
		{kind: httpRouteKind, groups: []string{gatewayGroup}, read: (*fileRead).httpRoute},
		{kind: "Gateway", groups: []string{gatewayGroup}, read: (*fileRead).gateway},
		{kind: "GatewayClass", groups: []string{gatewayGroup}, read: (*fileRead).gatewayClass},
	},
	defaults: []*Default{GatewayNoRetry, GatewayRetryConnectionErrors, GatewayRetryAttempts,
		IstioGatewayRetryOn, IstioGatewayRetryAttempts,
		EnvoyGatewayNoRetry, EnvoyGatewayRetries, EnvoyGatewayRetryOn, EnvoyGatewayRetriableStatusCodes},
}

// The defaults it relies on.
var (
	GatewayNoRetry = &Default{
		ID:      "gateway-api.no-retry",
		Setting: "HTTPRoute rules[].retry",
		Value:   "no retry",
		Source:  "Gateway API HTTPRouteRule.retry (GEP-1731): retries are configured by the retry stanza",
	}
	GatewayRetryConnectionErrors = &Default{
		ID:      "gateway-api.retry-connection-errors",
		Setting: "HTTPRoute rules[].retry (conditions besides codes)",
		Value:   "connection errors (connect_error)",
		Source:  "Gateway API HTTPRouteRetry (GEP-1731): implementations MUST retry on connection errors if a retry stanza is configured",
	}
	GatewayRetryAttempts = &Default{
		ID:      "gateway-api.retry-attempts",
		Setting: "HTTPRoute rules[].retry.attempts",
		Value:   "implementation-specific",
		Source:  "Gateway API HTTPRouteRetry.attempts: when unspecified, the number of retries is implementation-specific",
	}
)

// The defaults of the implementations (implementation.go): what each
// does with a rule without a retry stanza, and with one.
var (
	IstioGatewayRetryOn = &Default{
		ID:      "gateway-api.istio.retry-on",
		Setting: "HTTPRoute rules[].retry under Istio (conditions besides codes)",
		Value:   "connect-failure,refused-stream,unavailable,cancelled",
		Source:  "istio/istio pilot/pkg/config/kube/gateway/conversion.go: a retry stanza becomes retries with this retryOn plus its codes",
	}
	IstioGatewayRetryAttempts = &Default{
		ID:      "gateway-api.istio.retry-attempts",
		Setting: "HTTPRoute rules[].retry.attempts under Istio",
		Value:   "2",
		Source:  "istio/istio pilot/pkg/config/kube/gateway/conversion.go: Attempts ptr.OrDefault(r.Retry.Attempts, 2)",
	}
	EnvoyGatewayNoRetry = &Default{
		ID:      "gateway-api.envoy-gateway.no-retry",
		Setting: "HTTPRoute rules[].retry under Envoy Gateway (no BackendTrafficPolicy retry)",
		Value:   "no retry",
		Source:  "envoyproxy/gateway internal/gatewayapi/route.go processRouteRetry: no retry stanza, no retry policy",
	}
	EnvoyGatewayRetries = &Default{
		ID:      "gateway-api.envoy-gateway.retries",
		Setting: "HTTPRoute rules[].retry.attempts under Envoy Gateway",
		Value:   "2",
		Source:  "envoyproxy/gateway internal/xds/translator/route.go: retryDefaultNumRetries",
	}
	EnvoyGatewayRetryOn = &Default{
		ID:      "gateway-api.envoy-gateway.retry-on",
		Setting: "HTTPRoute rules[].retry under Envoy Gateway (conditions)",
		Value:   "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
		Source:  "envoyproxy/gateway internal/xds/translator/route.go: retryDefaultRetryOn",
	}
	EnvoyGatewayRetriableStatusCodes = &Default{
		ID:      "gateway-api.envoy-gateway.retriable-status-codes",
		Setting: "HTTPRoute rules[].retry.codes under Envoy Gateway",
		Value:   "503",
		Source:  "envoyproxy/gateway internal/xds/translator/route.go: retryDefaultRetriableStatusCode",
	}
)

// gatewayGroup is the API group of the Gateway API kinds.
const gatewayGroup = "gateway.networking.k8s.io"

// gateway reads a Gateway: its class finds the implementation of the
// routes attached to it.
func (f *fileRead) gateway(root *yaml.Node) {
	res := f.resource(GatewayAPI, "Gateway", root)
	res.Class, _ = f.text(f.path(root, "spec", "gatewayClassName"), "spec.gatewayClassName")
}

// gatewayClass reads a GatewayClass (cluster-scoped): its controllerName
// is the implementation.
func (f *fileRead) gatewayClass(root *yaml.Node) {
	res := f.resource(GatewayAPI, "GatewayClass", root)
	res.Namespace = ""
	res.Class, _ = f.text(f.path(root, "spec", "controllerName"), "spec.controllerName")
}

// parentRefs reads an HTTPRoute's parents: a Gateway (the default kind)
// carries the traffic entering through it, a Service (GAMMA) the
// traffic between services.
func (f *fileRead) parentRefs(res *Resource, spec *yaml.Node) {
	refs := f.items(f.field(spec, "parentRefs"), "spec.parentRefs")
	if len(refs) == 0 {
		return // attached to nothing idemlint can tell: any hop
	}
	res.Traffic = 0
	for _, ref := range refs {
		kind, _ := f.text(f.field(ref, "kind"), "parentRefs.kind")
		ns, _ := f.text(f.field(ref, "namespace"), "parentRefs.namespace")
		p := Parent{Kind: cmp.Or(kind.Value, "Gateway"), Namespace: cmp.Or(ns.Value, res.Namespace)}
		p.Name, _ = f.text(f.field(ref, "name"), "parentRefs.name")
		res.Parents = append(res.Parents, p)
		if p.Kind == "Service" {
			res.Traffic |= SidecarTraffic
		} else {
			res.Traffic |= GatewayTraffic
		}
	}
}

func (f *fileRead) httpRoute(root *yaml.Node) {
	res := f.resource(GatewayAPI, httpRouteKind, root)
	spec := f.field(root, "spec")
	f.parentRefs(res, spec)
	res.Hosts = f.texts(f.field(spec, "hostnames"), "spec.hostnames")
	for _, rule := range f.items(f.field(spec, "rules"), "spec.rules") {
		rt := &Route{Resource: res, At: f.pos(rule)}
		matches := f.items(f.field(rule, "matches"), "matches")
		for _, m := range matches {
			rt.Matches = append(rt.Matches, f.gatewayMatch(m))
		}
		if len(matches) == 0 {
			// No matches: a PathPrefix "/" match (HTTPRouteRule.matches).
			all, _ := pathmatch.New(pathmatch.SegmentPrefix, "/")
			rt.Matches = []Match{{Path: &all, At: rt.At}}
		}
		var services []Ref
		for _, b := range f.items(f.field(rule, "backendRefs"), "backendRefs") {
			if name, ok := f.text(f.field(b, "name"), "backendRefs.name"); ok {
				rt.Backends = append(rt.Backends, name)
				kind, _ := f.text(f.field(b, "kind"), "backendRefs.kind")
				ns, _ := f.text(f.field(b, "namespace"), "backendRefs.namespace")
				if kind.Value == "" || kind.Value == "Service" {
					services = append(services, Ref{Kind: "Service", Name: name.Value, Namespace: cmp.Or(ns.Value, res.Namespace)})
				}
			}
			for _, filter := range f.items(f.field(b, "filters"), "backendRefs.filters") {
				f.gatewayFilter(rt, filter) // a backend's own filters
			}
		}
		for _, filter := range f.items(f.field(rule, "filters"), "filters") {
			f.gatewayFilter(rt, filter)
		}
		rt.gateway = f.ruleRetry(rt, rule)
		rt.gateway.services = services
		res.Routes = append(res.Routes, rt)
	}
	res.rank(pathmatch.GatewayAPI)
}

// gatewayMatch reads an HTTPRouteMatch; a path without type or value is
// PathPrefix "/" (the API's defaults).
func (f *fileRead) gatewayMatch(m *yaml.Node) Match {
	match := Match{At: f.pos(m), Partial: f.partial(m, "path", "method")}
	kind, value := pathmatch.SegmentPrefix, Text{Value: "/", At: match.At}
	if p := f.field(m, "path"); p != nil {
		if t, ok := f.text(f.field(p, "type"), "matches.path.type"); ok {
			switch t.Value {
			case "Exact":
				kind = pathmatch.Exact
			case "PathPrefix":
			case "RegularExpression":
				kind = pathmatch.Regex
			default:
				f.problems = append(f.problems, Problem{At: t.At, Message: "matches.path.type " + t.Value + " is not Exact, PathPrefix or RegularExpression"})
			}
		}
		if t, ok := f.text(f.field(p, "value"), "matches.path.value"); ok {
			value = t
		}
	}
	match.Path = f.matcher(kind, value, "matches.path")
	if t, ok := f.text(f.field(m, "method"), "matches.method"); ok {
		match.Method = f.matcher(pathmatch.Exact, t, "matches.method")
	}
	return match
}

// gatewayFilter reads the filters that touch what the as-built rules check:
// RequestHeaderModifier (remove, set) and CORS.
func (f *fileRead) gatewayFilter(rt *Route, filter *yaml.Node) {
	typ, _ := f.text(f.field(filter, "type"), "filters.type")
	switch typ.Value {
	case "RequestHeaderModifier":
		mod := f.field(filter, "requestHeaderModifier")
		for _, name := range f.texts(f.field(mod, "remove"), "requestHeaderModifier.remove") {
			rt.Removed = append(rt.Removed, Header{Name: name.Value, At: name.At, Field: "RequestHeaderModifier.remove"})
		}
		for _, h := range f.items(f.field(mod, "set"), "requestHeaderModifier.set") {
			if name, ok := f.text(f.field(h, "name"), "requestHeaderModifier.set.name"); ok {
				rt.Set = append(rt.Set, Header{Name: name.Value, At: name.At, Field: "RequestHeaderModifier.set"})
			}
		}
	case "CORS":
		if cors := f.visit(f.field(filter, "cors")); cors != nil && !isNull(cors) {
			rt.CORS = f.corsList(cors, "allowHeaders", "allowCredentials")
		}
	}
}

// ruleRetry reads a rule's retry stanza and timeouts; what the retry is
// depends on the implementation (Set.Implement).
func (f *fileRead) ruleRetry(rt *Route, rule *yaml.Node) *ruleRetry {
	stanza := f.visit(f.field(rule, "retry"))
	out := &ruleRetry{rule: rt.At, at: f.pos(stanza), present: stanza != nil && !isNull(stanza)}
	if out.present {
		if t, ok := f.text(f.field(stanza, "attempts"), "retry.attempts"); ok {
			if n, err := strconv.Atoi(t.Value); err != nil || n < 0 {
				f.problems = append(f.problems, Problem{At: t.At, Message: "retry.attempts is " + strconv.Quote(t.Value) + ", not a whole number"})
			} else {
				out.attempts = written(t)
			}
		}
		for _, c := range f.texts(f.field(stanza, "codes"), "retry.codes") {
			if code, err := strconv.Atoi(c.Value); err != nil || code < 400 || code > 599 {
				f.problems = append(f.problems, Problem{At: c.At, Message: "retry.codes entry " + strconv.Quote(c.Value) + " is not a status code from 400 to 599"})
				continue
			}
			out.codes = append(out.codes, c)
		}
	}
	timeouts := f.field(rule, "timeouts")
	if t, ok := f.duration(f.field(timeouts, "request"), "timeouts.request"); ok {
		rt.Timeout, rt.TimeoutFrom = t.d, Origin{At: t.At}
	}
	if t, ok := f.duration(f.field(timeouts, "backendRequest"), "timeouts.backendRequest"); ok {
		out.perTry = &t
	}
	return out
}
