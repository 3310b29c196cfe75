package asbuilt

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// What an HTTPRoute does when its rule writes no retry, and what it does
// with one, is its implementation's choice. The implementation is found
// from the route's parentRefs: a Gateway (read when present) names its
// class, a GatewayClass (read when present) names its controller, a
// Service parent (GAMMA) is implemented by the mesh. A class not read is
// known by its usual name, or by what .idemlint.json's as_built.classes
// says of it. Implement applies what was found to every rule.

// ImplementationName names an implementation of the Gateway API.
type ImplementationName string

// The implementations idemlint knows; None retries only what a retry
// stanza says (the API's own reading).
const (
	IstioImplementation        ImplementationName = "istio"
	EnvoyGatewayImplementation ImplementationName = "envoy-gateway"
	KongImplementation         ImplementationName = "kong"
	NoImplementation           ImplementationName = "none"
)

// Implementation is who carries an HTTPRoute, and how idemlint knows.
type Implementation struct {
	Name ImplementationName
	// By says how it was found, for "idemlint graph" and findings: "GatewayClass
	// istio (controllerName istio.io/gateway-controller)".
	By string
}

// implementation is what one implementation does with a Gateway API
// rule's retry.
type implementation struct {
	name ImplementationName
	// controllers are its GatewayClass controllerNames; classes the class
	// names it is known by when no GatewayClass is read.
	controllers, classes []string
	// apply sets the rule's retry: rt.gateway is the rule's retry stanza
	// as written. A policy attached to the route or its Gateway (an
	// implementation's own resource) is applied here too.
	apply func(s *Set, rt *Route)
}

// implementations are the implementations, by name; lookups go through
// implementationNamed and the controller and class lists.
var implementations = []*implementation{
	{name: IstioImplementation, controllers: []string{"istio.io/gateway-controller", "istio.io/mesh-controller"}, classes: []string{"istio", "istio-waypoint"}, apply: istioRule},
	{name: EnvoyGatewayImplementation, controllers: []string{"gateway.envoyproxy.io/gatewayclass-controller"}, classes: []string{"eg", "envoy-gateway"}, apply: envoyGatewayRule},
	{name: KongImplementation, controllers: []string{"konghq.com/kic-gateway-controller"}, classes: []string{"kong"}, apply: kongRule},
	{name: NoImplementation, apply: apiRule},
}

// ImplementationNames are the names .idemlint.json's as_built.classes
// accepts, in the table's order.
func ImplementationNames() []string {
	out := make([]string, len(implementations))
	for i, im := range implementations {
		out[i] = string(im.name)
	}
	return out
}

func implementationNamed(name ImplementationName) *implementation {
	i := slices.IndexFunc(implementations, func(im *implementation) bool { return im.name == name })
	if i < 0 {
		return implementations[len(implementations)-1]
	}
	return implementations[i]
}

// ParseImplementation returns the implementation named s (a value of
// as_built.classes), or an error naming the implementations.
func ParseImplementation(s string) (ImplementationName, error) {
	if slices.Contains(ImplementationNames(), s) {
		return ImplementationName(s), nil
	}
	return "", fmt.Errorf("the implementation must be one of %s, got %q", strings.Join(ImplementationNames(), ", "), s)
}

// Platforms is what a run says of the platforms no file shows: the mesh
// (a GAMMA route's implementation), and the implementation of Gateway
// classes by name (.idemlint.json as_built.classes).
type Platforms struct {
	Mesh    Mesh
	Classes map[string]ImplementationName
}

// Implement finds the implementation of every HTTPRoute of s under pl
// and sets each rule's retry as it carries it. Read implements with no
// mesh and no classes; a Deployment again with its own, before any
// rule reads it.
func (s *Set) Implement(pl Platforms) {
	for _, res := range s.Resources {
		if res.Kind != httpRouteKind {
			continue
		}
		found := s.implementationOf(res, pl)
		res.Implementation = &found
		im := implementationNamed(found.Name)
		for _, rt := range res.Routes {
			// What an implementation set when implemented before.
			rt.NonIdempotent, rt.DropsUnderscores = nil, nil
			if s.isPolicyCORS(rt.CORS) {
				rt.CORS = nil
			}
			im.apply(s, rt)
		}
	}
}

// implementationOf finds who implements the HTTPRoute res: the first of
// its parents that says.
func (s *Set) implementationOf(res *Resource, pl Platforms) Implementation {
	var notFound []string
	for _, p := range res.Parents {
		if p.Kind == "Service" {
			if pl.Mesh == IstioMesh {
				return Implementation{IstioImplementation, "its parent Service " + p.Name.Value + " (GAMMA) under mesh istio"}
			}
			notFound = append(notFound, "its parent Service "+p.Name.Value+" (GAMMA) is carried by no mesh")
			continue
		}
		gw := s.object("Gateway", p.Namespace, p.Name.Value)
		if gw == nil {
			notFound = append(notFound, fmt.Sprintf("Gateway %s/%s not read", p.Namespace, p.Name.Value))
			continue
		}
		if found, ok := s.classImplementation(gw.Class.Value, pl); ok {
			return found
		}
		notFound = append(notFound, fmt.Sprintf("GatewayClass %q not known (.idemlint.json as_built.classes can name its implementation)", gw.Class.Value))
	}
	if len(notFound) == 0 {
		return Implementation{NoImplementation, "no parentRefs"}
	}
	return Implementation{NoImplementation, strings.Join(notFound, "; ")}
}

// classImplementation finds the implementation of a Gateway class: its
// GatewayClass's controllerName when the GatewayClass is read, else the
// run's as_built.classes, else the class's usual name.
func (s *Set) classImplementation(class string, pl Platforms) (Implementation, bool) {
	if gc := s.object("GatewayClass", "", class); gc != nil {
		for _, im := range implementations {
			if slices.Contains(im.controllers, gc.Class.Value) {
				return Implementation{im.name, fmt.Sprintf("GatewayClass %s (controllerName %s)", class, gc.Class.Value)}, true
			}
		}
	}
	if name, ok := pl.Classes[class]; ok {
		return Implementation{name, "GatewayClass " + class + " (.idemlint.json as_built.classes)"}, true
	}
	for _, im := range implementations {
		if slices.Contains(im.classes, class) {
			return Implementation{im.name, "GatewayClass " + class + " (known by name)"}, true
		}
	}
	return Implementation{}, false
}

// object returns the resource of kind, namespace and name read; a
// namespace "" for a cluster-scoped kind.
func (s *Set) object(kind, namespace, name string) *Resource {
	for _, res := range s.named[Ref{Kind: kind, Name: name}] {
		if namespace == "" || res.Namespace == namespace {
			return res
		}
	}
	return nil
}

// ruleRetry is a Gateway API rule's retry stanza as written; its values
// are checked when read.
type ruleRetry struct {
	rule     Pos      // the rule
	at       Pos      // the stanza
	present  bool     // a retry stanza is written
	attempts *setting // retries, nil when not written
	codes    []Text
	perTry   *timed // timeouts.backendRequest
	// services are the Kubernetes Services of the rule's backendRefs,
	// whose annotations an implementation may read (Kong's retries).
	services []Ref
}

// perTrySetting is the rule's backendRequest timeout, the per-try
// timeout of its retries; nil when not written.
func (g *ruleRetry) perTrySetting() *setting {
	if g.perTry == nil {
		return nil
	}
	return &setting{Value: g.perTry.d.String(), From: Origin{At: g.perTry.At}}
}

// istioRule: Istio turns the rule into a VirtualService route, its retry
// stanza into retries on connection failures plus the codes (2 retries
// unless written), and no stanza into no retries, where Istio's default
// retry applies (istio/istio pilot/pkg/config/kube/gateway/conversion.go).
func istioRule(s *Set, rt *Route) {
	g := rt.gateway
	if !g.present {
		rt.Retry = s.IstioDefaultRetry(g.rule)
		return
	}
	attempts := g.attempts
	if attempts == nil {
		attempts = defaulted(IstioGatewayRetryAttempts, g.at)
	}
	rt.Retry, _ = envoyRetryWith(attempts, defaulted(IstioGatewayRetryOn, g.at), codeSettings(g.codes), g.perTrySetting())
}

// envoyGatewayRule: Envoy Gateway makes no retry without a stanza, and
// with one, its default retry with the stanza's attempts and codes
// (envoyproxy/gateway internal/gatewayapi/route.go processRouteRetry,
// internal/xds/translator/route.go buildRetryPolicy). Its policies on the
// route or its Gateway (envoygateway.go) give the retry of a rule
// without a stanza (the stanza takes precedence: ir.HTTPRoute.GetRetry),
// drop or reject header names with "_" unless they allow them, and give
// the CORS of a route without its own CORS filter.
func envoyGatewayRule(s *Set, rt *Route) {
	pol := s.envoyGatewayPolicy(rt.Resource)
	underscores := pol.underscores
	if underscores == nil {
		underscores = defaulted(EnvoyGatewayUnderscores, rt.Resource.At)
	}
	if underscores.Value != "Allow" {
		rt.DropsUnderscores = &underscores.From
	}
	if rt.CORS == nil {
		rt.CORS = pol.cors
	}
	g := rt.gateway
	if !g.present {
		if pol.retry != nil {
			rt.Retry, _ = envoyGatewayPolicyRetry(pol.retry)
			return
		}
		rt.Retry = noRetry(EnvoyGatewayNoRetry, g.rule)
		return
	}
	attempts := g.attempts
	if attempts == nil {
		attempts = defaulted(EnvoyGatewayRetries, g.at)
	}
	codes := codeSettings(g.codes)
	if len(codes) == 0 {
		codes = []*setting{defaulted(EnvoyGatewayRetriableStatusCodes, g.at)}
	}
	rt.Retry, _ = envoyRetryWith(attempts, defaulted(EnvoyGatewayRetryOn, g.at), codes, g.perTrySetting())
}

// kongRule: Kong retries through its service's retries whether or not a
// stanza is written (the stanza's attempts, when written, replace them),
// on nginx's error and timeout, POST, LOCK and PATCH only before they
// were sent. The service's retries are the backend Service's
// konghq.com/retries annotation when that Service is read (the first
// backend's that has it: the controller makes one Kong service of the
// rule), else Kong's default.
func kongRule(s *Set, rt *Route) {
	g := rt.gateway
	tries := defaulted(KongRetries, g.rule)
	for _, ref := range g.services {
		if svc := s.object(ref.Kind, ref.Namespace, ref.Name); svc != nil && svc.kongRetries != nil {
			tries = svc.kongRetries
			break
		}
	}
	if g.present && g.attempts != nil {
		tries = g.attempts
	}
	// Kong's retries are retries; nginx counts attempts in all.
	n, err := strconv.Atoi(tries.Value)
	if err != nil || n < 0 {
		n, _ = strconv.Atoi(KongRetries.Value)
	}
	inAll := &setting{Value: strconv.Itoa(n + 1), From: tries.From}
	next := defaulted(KongRetryOn, g.rule)
	rt.Retry, _ = nginxRetry(next, inAll, nil, false)
	post, _ := nginxRetry(next, inAll, nil, true)
	rt.NonIdempotent = &post
	if g.perTry != nil {
		rt.Retry.PerTryTimeout, rt.Retry.PerTryTimeoutFrom = g.perTry.d, Origin{At: g.perTry.At}
	}
}

// apiRule is the Gateway API's own reading, for an implementation idemlint
// does not know: no retry without a stanza; with one, connection errors
// and the codes, the attempts implementation-specific when not written.
func apiRule(_ *Set, rt *Route) {
	g := rt.gateway
	rt.Retry, _ = gatewayRetry(g.at, g.present, g.attempts, g.codes, g.rule)
	if g.perTry != nil {
		rt.Retry.PerTryTimeout, rt.Retry.PerTryTimeoutFrom = g.perTry.d, Origin{At: g.perTry.At}
	}
}

// noRetry is the retry of a route that sends each request once because
// of the default d, applying at at.
func noRetry(d *Default, at Pos) Retry {
	return Retry{Attempts: 1, AttemptsKnown: true, AttemptsFrom: defaulted(d, at).From}
}

// codeSettings are the status codes of a retry stanza, each where it is
// written.
func codeSettings(codes []Text) []*setting {
	out := make([]*setting, 0, len(codes))
	for _, c := range codes {
		if code, err := strconv.Atoi(c.Value); err == nil && code >= 400 && code <= 599 {
			out = append(out, written(c))
		}
	}
	return out
}

// httpRouteKind is the Gateway API route kind idemlint reads.
const httpRouteKind = "HTTPRoute"
