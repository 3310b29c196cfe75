package asbuilt

import (
	"go.yaml.in/yaml/v4"

	"github.com/idemlint/idemlint/checks/pathmatch"
)

// Gateway API (spec 8.1): an HTTPRoute's rules. Field names are those of
// sigs.k8s.io/gateway-api apis/v1 HTTPRoute (retry: GEP-1731).

// GatewayAPI is the platform's name in findings.
const GatewayAPI Platform = "gateway-api"

// gatewayAPI is the platform as platforms lists it.
var gatewayAPI = &platform{
	name:     GatewayAPI,
	kinds:    []kindReader{{kind: "HTTPRoute", groups: []string{"gateway.networking.k8s.io"}, read: (*fileRead).httpRoute}},
	defaults: []*Default{GatewayNoRetry, GatewayRetryConnectionErrors, GatewayRetryAttempts},
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

func (f *fileRead) httpRoute(root *yaml.Node) {
	res := f.resource(GatewayAPI, "HTTPRoute", root)
	spec := f.field(root, "spec")
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
		for _, b := range f.items(f.field(rule, "backendRefs"), "backendRefs") {
			if name, ok := f.text(f.field(b, "name"), "backendRefs.name"); ok {
				rt.Backends = append(rt.Backends, name)
			}
			for _, filter := range f.items(f.field(b, "filters"), "backendRefs.filters") {
				f.gatewayFilter(rt, filter) // a backend's own filters
			}
		}
		for _, filter := range f.items(f.field(rule, "filters"), "filters") {
			f.gatewayFilter(rt, filter)
		}
		f.gatewayRetry(rt, rule)
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

// gatewayFilter reads the filters that touch what spec 8 checks:
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

// gatewayRetry reads a rule's retry and timeouts.
func (f *fileRead) gatewayRetry(rt *Route, rule *yaml.Node) {
	stanza := f.visit(f.field(rule, "retry"))
	present := stanza != nil && !isNull(stanza)
	var attempts *setting
	var codes []Text
	if present {
		if t, ok := f.text(f.field(stanza, "attempts"), "retry.attempts"); ok {
			attempts = written(t)
		}
		codes = f.texts(f.field(stanza, "codes"), "retry.codes")
	}
	var problems []Problem
	rt.Retry, problems = gatewayRetry(f.pos(stanza), present, attempts, codes, rt.At)
	f.problems = append(f.problems, problems...)
	timeouts := f.field(rule, "timeouts")
	if t, ok := f.duration(f.field(timeouts, "request"), "timeouts.request"); ok {
		rt.Timeout, rt.TimeoutFrom = t.d, Origin{At: t.At}
	}
	if t, ok := f.duration(f.field(timeouts, "backendRequest"), "timeouts.backendRequest"); ok {
		rt.Retry.PerTryTimeout, rt.Retry.PerTryTimeoutFrom = t.d, Origin{At: t.At}
	}
}
