package asbuilt

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idemlint/idemlint/checks/pathmatch"
)

// Pos is a place in an infrastructure file.
type Pos struct {
	File   string
	Line   int // 1-based; 0 when the file has no position (unreadable)
	Column int // 1-based, in Unicode code points
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column) }

// Platform is the proxy or mesh a resource configures.
type Platform string

// Text is a string read from a file, where it was written.
type Text struct {
	Value string
	At    Pos
}

// Origin says where a value of the model comes from: a field written at
// At, or, when Default is set, a platform default (At is then the place
// that made the default apply, such as the route without "retries", or
// zero when nothing was read for it).
type Origin struct {
	At      Pos
	Default *Default
}

// IsDefault reports whether the value is a platform default.
func (o Origin) IsDefault() bool { return o.Default != nil }

// Resource is one routing resource read: a VirtualService, an HTTPRoute,
// an Ingress, or an API Gateway export.
type Resource struct {
	Platform Platform
	// Kind is the Kubernetes kind, or "ApiGateway" for an API Gateway
	// export (an edge's as_built entry names it so).
	Kind string
	// Name is metadata.name, or info.title for an API Gateway export.
	Name Text
	// Namespace is metadata.namespace; "default" when not written, as
	// Kubernetes reads it.
	Namespace string
	At        Pos // the document (its first key)
	// Traffic is the traffic the resource's routes apply to (an Istio
	// VirtualService's gateways, an HTTPRoute's parents).
	Traffic Traffic
	// Parents are the gateways or services named as what the resource
	// attaches to: an Istio VirtualService's gateways, an HTTPRoute's
	// parentRefs.
	Parents []Parent
	// Class is a Gateway's gatewayClassName, or a GatewayClass's
	// controllerName: what finds the implementation of the routes that
	// attach to it (implementation.go).
	Class Text
	// Implementation is who carries an HTTPRoute, and how idemlint knows;
	// nil for the other kinds, which their platform carries.
	Implementation *Implementation
	// kongRetries is a Service's konghq.com/retries annotation: the
	// retries of an HTTPRoute under Kong that sends to it; nil for the
	// other kinds, and for a Service without it.
	kongRetries *setting
	// fingerprint tells a copy apart from a different definition.
	fingerprint uint64
	// Hosts are the Istio hosts, HTTPRoute hostnames or Ingress rule hosts.
	Hosts  []Text
	Routes []*Route // as written

	order []candidate // Routes' matches in the platform's precedence
	// pick, when set, is the platform's own choice of route where it is
	// not an order of the matches (nginx's locations).
	pick func(method, template string) (*Route, *Match, bool)
}

// Traffic is a set of the kinds of traffic a route may apply to.
type Traffic uint8

const (
	// SidecarTraffic goes between services, through their sidecars or a
	// mesh's proxies (Istio gateways "mesh", a GAMMA parentRef).
	SidecarTraffic Traffic = 1 << iota
	// GatewayTraffic enters through a gateway (an Istio Gateway, a
	// Gateway API Gateway).
	GatewayTraffic
	// AnyTraffic is a route whose platform has one kind of traffic only.
	AnyTraffic = SidecarTraffic | GatewayTraffic
)

// String words t for "idemlint graph" and the model's dump.
func (t Traffic) String() string {
	switch t {
	case SidecarTraffic:
		return "mesh"
	case GatewayTraffic:
		return "gateway"
	case AnyTraffic:
		return "any"
	}
	return "none"
}

// Parent is what a resource attaches to: a gateway, or a service for a
// GAMMA route.
type Parent struct {
	Kind, Namespace string
	Name            Text
}

// candidate is one match of one route, ranked by Sort.
type candidate struct {
	route *Route
	match int // index in route.Matches; -1 for a route without matches
}

// Route is one route of a resource: an Istio http entry, an HTTPRoute
// rule, an Ingress path, an API Gateway operation.
type Route struct {
	Resource *Resource
	At       Pos
	// Matches are alternatives: a request is carried when one holds. No
	// match at all carries every request.
	Matches []Match
	// Backends are the services the route sends to: the first DNS label
	// of an Istio destination host, an HTTPRoute backendRef, an Ingress
	// backend service (an edge whose "to" is one of them binds it:
	// docs/as-built.md, Binding resources to hops).
	Backends []Text
	// Retry is what the route retries, for every method unless
	// NonIdempotent is set.
	Retry Retry
	// NonIdempotent is the retry of POST, LOCK and PATCH where the
	// platform treats them apart (ingress-nginx without non_idempotent);
	// nil when Retry holds for every method.
	NonIdempotent *Retry
	// ByMethod are the retries of the methods a platform treats apart
	// by name (HAProxy's disable-l7-retry if METH_POST), by method.
	ByMethod map[string]Retry
	// Timeout bounds the whole request, retries included; 0 when none.
	Timeout     time.Duration
	TimeoutFrom Origin
	// Removed are the request headers removed before the upstream.
	Removed []Header
	// Set are the request headers the route sets, overwriting the client's.
	Set []Header
	// Forwards, when not nil, is the only request headers forwarded; every
	// other header is not (an API Gateway REST "http" integration).
	Forwards *Forwarding
	// DropsUnderscores is set where request headers whose names hold "_"
	// are dropped (ingress-nginx without enable-underscores-in-headers).
	DropsUnderscores *Origin
	// CORS is the CORS configuration read for the route; nil when none.
	CORS *CORS

	// gateway is a Gateway API rule's retry as written, which its
	// implementation turns into Retry (Set.Implement); nil for the other
	// kinds.
	gateway *ruleRetry
}

// RetryFor returns the retry the route applies to a request with method.
func (r *Route) RetryFor(method string) Retry {
	if retry, ok := r.ByMethod[strings.ToUpper(method)]; ok {
		return retry
	}
	if r.NonIdempotent != nil {
		switch strings.ToUpper(method) {
		case "POST", "LOCK", "PATCH":
			return r.NonIdempotent.forMethod(method)
		}
	}
	return r.Retry.forMethod(method)
}

// Drops reports whether the route does not forward the request header
// name (case-insensitively), and why: the header removed, or the list
// of forwarded headers, or the underscore setting.
func (r *Route) Drops(name string) (Origin, bool) {
	for _, h := range r.Removed {
		if strings.EqualFold(h.Name, name) {
			return Origin{At: h.At}, true
		}
	}
	if r.Forwards != nil && !r.Forwards.Has(name) {
		return r.Forwards.From, true
	}
	if r.DropsUnderscores != nil && strings.Contains(name, "_") {
		return *r.DropsUnderscores, true
	}
	return Origin{}, false
}

// Match is one condition of a route.
type Match struct {
	Path   *pathmatch.Matcher // nil: every path
	Method *pathmatch.Matcher // nil: every method
	At     Pos
	// Partial is set when the match also asks what idemlint does not
	// know of an operation's requests (a header, a query parameter, the
	// source workload): it holds for some of them only, such as a canary
	// route, so it carries none in general.
	Partial string // the condition, e.g. "headers"
	// Traffic, when not 0, narrows the resource's traffic for this match
	// (an Istio match's gateways).
	Traffic Traffic
}

// Holds reports whether every request with method to the path template
// (a boundary operation's) meets the match.
func (m Match) Holds(method, template string) bool {
	return m.Partial == "" && (m.Path == nil || m.Path.Match(template)) &&
		(m.Method == nil || m.Method.MatchString(strings.ToUpper(method)))
}

// Select returns the route the platform itself picks for a request with
// method to template on traffic (docs/as-built.md, Binding resources to
// hops), and the match that holds;
// false when no route of the resource carries it.
func (res *Resource) Select(method, template string, traffic Traffic) (*Route, *Match, bool) {
	if res.Traffic&traffic == 0 {
		return nil, nil, false
	}
	if res.pick != nil {
		return res.pick(method, template)
	}
	for _, c := range res.order {
		if c.match < 0 {
			return c.route, nil, true
		}
		if m := &c.route.Matches[c.match]; m.Holds(method, template) && res.carries(m, traffic) {
			return c.route, m, true
		}
	}
	return nil, nil, false
}

// carries reports whether the match m applies to traffic.
func (res *Resource) carries(m *Match, traffic Traffic) bool {
	if m.Traffic != 0 {
		return m.Traffic&traffic != 0
	}
	return res.Traffic&traffic != 0
}

// rank orders the resource's matches by the precedence of its platform.
func (res *Resource) rank(p pathmatch.Precedence) {
	var listed []candidate
	var cands []pathmatch.Candidate
	add := func(c candidate, pc pathmatch.Candidate) {
		pc.Index = len(listed)
		listed = append(listed, c)
		cands = append(cands, pc)
	}
	for _, r := range res.Routes {
		if len(r.Matches) == 0 {
			add(candidate{r, -1}, pathmatch.Candidate{})
		}
		for i, m := range r.Matches {
			pc := pathmatch.Candidate{Path: m.Path}
			if m.Method != nil {
				pc.Method = m.Method.Value
			}
			add(candidate{r, i}, pc)
		}
	}
	pathmatch.Sort(p, cands)
	res.order = make([]candidate, len(cands))
	for i, c := range cands {
		res.order[i] = listed[c.Index]
	}
}

// Retry is an effective retry policy (docs/as-built.md, Counting and
// classifying retries).
type Retry struct {
	// Attempts are counted in all, the first included, as
	// http_retry.max_attempts is: 1 is no retry; 0 is unlimited
	// (nginx proxy-next-upstream-tries 0).
	Attempts int
	// AttemptsKnown is false when the platform leaves the number to the
	// implementation (a Gateway API retry without attempts): IDL406's.
	AttemptsKnown bool
	AttemptsFrom  Origin
	// Conditions are what is retried, on the boundary retry_on vocabulary.
	Conditions []Condition
	// PerTryTimeout bounds each attempt; 0 when none.
	PerTryTimeout     time.Duration
	PerTryTimeoutFrom Origin
	// OnlyIf, when not empty, is what a request must meet to be retried
	// at all (Envoy's retriable_request_headers): one of its gates.
	OnlyIf []Gate
}

// Gate is one condition a retry requires of the request. A gate with
// neither Method nor Header may be met by any request (an inverted
// match, one that a missing header meets).
type Gate struct {
	// Method, when not nil, is met by the methods it matches.
	Method *pathmatch.Matcher
	// Header, when Method is nil, is met by a request that holds it.
	Header string
	At     Pos
}

// forMethod is r for a request with method: a gate on the method that
// it meets lifts the gates; when only gates on other methods remain and
// none on a header, the request is not retried.
func (r Retry) forMethod(method string) Retry {
	if len(r.OnlyIf) == 0 {
		return r
	}
	var others []Gate
	for _, g := range r.OnlyIf {
		switch {
		case g.Method == nil:
			others = append(others, g)
		case g.Method.MatchString(strings.ToUpper(method)):
			r.OnlyIf = nil
			return r
		}
	}
	if len(others) == 0 {
		return Retry{Attempts: 1, AttemptsKnown: true, AttemptsFrom: Origin{At: r.OnlyIf[0].At}}
	}
	r.OnlyIf = others
	return r
}

// OnlyWith reports whether r retries only requests that hold the header
// name: every gate asks for it.
func (r Retry) OnlyWith(name string) bool {
	return len(r.OnlyIf) > 0 && !slices.ContainsFunc(r.OnlyIf, func(g Gate) bool { return g.Method != nil || !strings.EqualFold(g.Header, name) })
}

// Retries reports whether a request may be sent more than once.
func (r Retry) Retries() bool { return r.Attempts != 1 && len(r.Conditions) > 0 }

// ResendsAfterReceipt reports whether the retry may resend a request the
// upstream already received and may have acted on: it has a condition
// other than connect_error.
func (r Retry) ResendsAfterReceipt() bool {
	return r.Retries() && slices.ContainsFunc(r.Conditions, func(c Condition) bool { return c.Kind != ConnectError })
}

// FromDefault reports whether any part of the retry is a platform
// default, and returns the first default involved.
func (r Retry) FromDefault() (*Default, bool) {
	for _, o := range r.origins() {
		if o.Default != nil {
			return o.Default, true
		}
	}
	return nil, false
}

func (r Retry) origins() []Origin {
	out := []Origin{r.AttemptsFrom}
	for _, c := range r.Conditions {
		out = append(out, c.From)
	}
	return append(out, r.PerTryTimeoutFrom)
}

// ConditionKind is a class of retry_on value.
type ConditionKind int

const (
	// ConnectError: the request was never sent (retry_on "connect_error").
	ConnectError ConditionKind = iota
	// Timeout: no answer after the request was sent (retry_on "timeout").
	Timeout
	// Status: an answer with one of the status codes Low to High.
	Status
	// Other: a condition with no retry_on equivalent (Envoy
	// retriable-headers, a name idemlint does not know); it resends
	// after receipt and no retry_on covers it.
	Other
)

// Condition is one retry condition, mapped onto retry_on
// (docs/as-built.md, Counting and classifying retries).
type Condition struct {
	Kind      ConditionKind
	Low, High int // Status only: the codes retried, Low to High
	// Platform is the platform's own name for it: "gateway-error",
	// "http_503", "error".
	Platform string
	From     Origin
}

// String is the condition in retry_on terms: "connect_error", "timeout",
// "503", "500-599".
func (c Condition) String() string {
	switch c.Kind {
	case ConnectError:
		return "connect_error"
	case Timeout:
		return "timeout"
	case Other:
		return c.Platform
	}
	if c.Low == c.High {
		return fmt.Sprint(c.Low)
	}
	return fmt.Sprintf("%d-%d", c.Low, c.High)
}

// Within reports whether a boundary http_retry.retry_on list (its
// values as written: "connect_error", "timeout", "503") covers the
// condition: for status codes, every code of it.
func (c Condition) Within(retryOn []string) bool {
	switch c.Kind {
	case ConnectError, Timeout:
		return slices.Contains(retryOn, c.String())
	case Other:
		return false
	}
	for code := c.Low; code <= c.High; code++ {
		if !slices.Contains(retryOn, fmt.Sprint(code)) {
			return false
		}
	}
	return true
}

// Header is a request header a route removes or sets.
type Header struct {
	Name string
	At   Pos
	// Field names what does it: "headers.request.remove",
	// "RequestHeaderModifier.remove", "configuration-snippet".
	Field string
}

// Forwarding is the complete list of request headers a route forwards.
type Forwarding struct {
	Headers []Header
	From    Origin // the integration, with the default that applies
}

// Has reports whether name is forwarded (case-insensitively).
func (f *Forwarding) Has(name string) bool {
	return slices.ContainsFunc(f.Headers, func(h Header) bool { return strings.EqualFold(h.Name, name) })
}

// CORS is a CORS configuration read for a route.
type CORS struct {
	At Pos // the configuration: corsPolicy, the CORS filter, enable-cors
	// AllowHeaders may hold the literal "*".
	AllowHeaders     []Text
	AllowHeadersFrom Origin
	// Echo is set when the answer allows whatever headers the preflight
	// asks for (Kong's cors plugin without headers).
	Echo            bool
	Credentials     bool
	CredentialsFrom Origin
}

// Allows reports whether the CORS answer lets the browser send header
// name: echoed, listed (case-insensitively) or "*".
func (c *CORS) Allows(name string) bool {
	return c.Echo || slices.ContainsFunc(c.AllowHeaders, func(h Text) bool { return h.Value == "*" || strings.EqualFold(h.Value, name) })
}

// Wildcard returns the literal "*" of AllowHeaders, if any.
func (c *CORS) Wildcard() (Text, bool) {
	i := slices.IndexFunc(c.AllowHeaders, func(h Text) bool { return h.Value == "*" })
	if i < 0 {
		return Text{}, false
	}
	return c.AllowHeaders[i], true
}
