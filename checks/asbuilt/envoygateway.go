package asbuilt

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Envoy Gateway's policies (gateway.envoyproxy.io): what changes the
// HTTPRoutes it carries beside their own rules. A BackendTrafficPolicy's
// retry, a ClientTrafficPolicy's underscore action and a SecurityPolicy's
// CORS, each on the HTTPRoute it targets or on every route of the
// Gateway it targets (a policy on the route wins). Field names are those
// of envoyproxy/gateway api/v1alpha1.

// EnvoyGateway is the platform's name in findings.
const EnvoyGateway Platform = "envoy-gateway"

const envoyGatewayGroup = "gateway.envoyproxy.io"

// envoyGateway is the platform as platforms lists it.
var envoyGateway = &platform{
	name: EnvoyGateway,
	kinds: []kindReader{
		{kind: "BackendTrafficPolicy", groups: []string{envoyGatewayGroup}, read: (*fileRead).envoyGatewayPolicy},
		{kind: "ClientTrafficPolicy", groups: []string{envoyGatewayGroup}, read: (*fileRead).envoyGatewayPolicy},
		{kind: "SecurityPolicy", groups: []string{envoyGatewayGroup}, read: (*fileRead).envoyGatewayPolicy},
	},
	defaults: []*Default{envoyGatewayUnderscores},
}

// The defaults it relies on; its retry's are those of an HTTPRoute's
// retry under Envoy Gateway (gatewayapi.go), which a policy's retry
// shares (internal/xds/translator/route.go buildRetryPolicy).
var (
	envoyGatewayUnderscores = &Default{
		ID:      "envoy-gateway.with-underscores-action",
		Setting: "ClientTrafficPolicy spec.headers.withUnderscoresAction",
		Value:   "RejectRequest",
		Source:  "envoyproxy/gateway api/v1alpha1/clienttrafficpolicy_types.go: the default action is to reject the request",
	}
)

// envoyGatewayPolicy is a policy read: what it targets and sets.
type envoyGatewayPolicy struct {
	kind, namespace string
	// targets are the HTTPRoutes and Gateways it targets, in its namespace.
	targets     []Ref
	retry       *envoyGatewayRetry // BackendTrafficPolicy spec.retry
	underscores *setting           // ClientTrafficPolicy spec.headers.withUnderscoresAction
	cors        *CORS              // SecurityPolicy spec.cors
}

// envoyGatewayRetry is a BackendTrafficPolicy's retry as written.
type envoyGatewayRetry struct {
	at         Pos
	numRetries *setting
	retryOn    bool // written
	triggers   []Text
	codes      []Text
	perTry     *setting
}

func (f *fileRead) envoyGatewayPolicy(root *yaml.Node) {
	kind, _ := f.text(f.field(root, "kind"), "kind")
	// A resource of its own, routing nothing: it is counted, named and
	// told apart from its copies as the routes it changes are.
	res := f.resource(EnvoyGateway, kind.Value, root)
	p := &envoyGatewayPolicy{kind: kind.Value, namespace: res.Namespace}
	ns := res.Namespace
	spec := f.field(root, "spec")
	refs := f.items(f.field(spec, "targetRefs"), "spec.targetRefs")
	if one := f.field(spec, "targetRef"); one != nil {
		refs = append(refs, one)
	}
	for _, ref := range refs {
		k, _ := f.text(f.field(ref, "kind"), "targetRef.kind")
		name, _ := f.text(f.field(ref, "name"), "targetRef.name")
		if (k.Value == httpRouteKind || k.Value == "Gateway") && name.Value != "" {
			p.targets = append(p.targets, Ref{Kind: k.Value, Name: name.Value, Namespace: ns})
		}
	}
	switch p.kind {
	case "BackendTrafficPolicy":
		if r := f.visit(f.field(spec, "retry")); r != nil && !isNull(r) {
			p.retry = &envoyGatewayRetry{at: f.pos(r)}
			if t, ok := f.text(f.field(r, "numRetries"), "retry.numRetries"); ok {
				p.retry.numRetries = written(t)
			}
			if on := f.visit(f.field(r, "retryOn")); on != nil && !isNull(on) {
				p.retry.retryOn = true
				p.retry.triggers = f.texts(f.field(on, "triggers"), "retry.retryOn.triggers")
				p.retry.codes = f.texts(f.field(on, "httpStatusCodes"), "retry.retryOn.httpStatusCodes")
			}
			if t, ok := f.text(f.path(r, "perRetry", "timeout"), "retry.perRetry.timeout"); ok {
				p.retry.perTry = written(t)
			}
		}
	case "ClientTrafficPolicy":
		if t, ok := f.text(f.path(spec, "headers", "withUnderscoresAction"), "headers.withUnderscoresAction"); ok {
			p.underscores = written(t)
		}
	case "SecurityPolicy":
		if c := f.visit(f.field(spec, "cors")); c != nil && !isNull(c) {
			p.cors = f.corsList(c, "allowHeaders", "allowCredentials")
		}
	}
	f.envoyGatewayPolicies = append(f.envoyGatewayPolicies, p)
}

// envoyGatewayEffective is what the policies give one HTTPRoute: each
// of retry, underscores and CORS from a policy on the route, else from
// one on a Gateway it is attached to; the first read of each.
type envoyGatewayEffective struct {
	retry       *envoyGatewayRetry
	underscores *setting
	cors        *CORS
}

func (s *Set) envoyGatewayPolicy(res *Resource) envoyGatewayEffective {
	var route, gateway envoyGatewayEffective
	onGateway := func(t Ref) bool {
		return slices.ContainsFunc(res.Parents, func(p Parent) bool {
			return p.Kind != "Service" && p.Name.Value == t.Name && p.Namespace == t.Namespace
		})
	}
	for _, p := range s.envoyGatewayPolicies {
		for _, t := range p.targets {
			into := &gateway
			switch {
			case t.Kind == httpRouteKind && t.Name == res.Name.Value && t.Namespace == res.Namespace:
				into = &route
			case t.Kind == "Gateway" && onGateway(t):
			default:
				continue
			}
			into.retry = cmp.Or(into.retry, p.retry)
			into.underscores = cmp.Or(into.underscores, p.underscores)
			into.cors = cmp.Or(into.cors, p.cors)
		}
	}
	return envoyGatewayEffective{
		retry:       cmp.Or(route.retry, gateway.retry),
		underscores: cmp.Or(route.underscores, gateway.underscores),
		cors:        cmp.Or(route.cors, gateway.cors),
	}
}

// envoyGatewayPolicyRetry is the retry a BackendTrafficPolicy gives
// (envoyproxy/gateway internal/xds/translator/route.go buildRetryPolicy):
// numRetries, 2 when not written; without retryOn the default triggers
// with 503; with it, its triggers (the default ones when it lists none)
// and its httpStatusCodes alone.
func envoyGatewayPolicyRetry(r *envoyGatewayRetry) (Retry, []Problem) {
	attempts := r.numRetries
	if attempts == nil {
		attempts = defaulted(envoyGatewayRetries, r.at)
	}
	retries, err := strconv.Atoi(attempts.Value)
	if err != nil || retries < 0 {
		return Retry{Attempts: 1, AttemptsKnown: true, AttemptsFrom: attempts.From},
			[]Problem{{At: attempts.From.At, Message: "retry.numRetries is " + strconv.Quote(attempts.Value) + ", not a whole number"}}
	}
	out := Retry{Attempts: 1 + retries, AttemptsKnown: true, AttemptsFrom: attempts.From}
	retryOn := defaulted(envoyGatewayRetryOn, r.at)
	codes := []*setting{defaulted(envoyGatewayRetriableStatusCodes, r.at)}
	if r.retryOn {
		codes = codeSettings(r.codes)
		if len(r.triggers) > 0 {
			names := make([]string, len(r.triggers))
			for i, t := range r.triggers {
				names[i] = t.Value
			}
			retryOn = &setting{Value: strings.Join(names, ","), From: Origin{At: r.triggers[0].At}}
		}
	}
	onReset := out.envoyConditions(retryOn, codes, false)
	return out, out.envoyPerTry(r.perTry, onReset, "retry.perRetry.timeout")
}

// isPolicyCORS reports whether c is a SecurityPolicy's CORS.
func (s *Set) isPolicyCORS(c *CORS) bool {
	return c != nil && slices.ContainsFunc(s.envoyGatewayPolicies, func(p *envoyGatewayPolicy) bool { return p.cors == c })
}
