package pathmatch

import (
	"cmp"
	"slices"
	"strings"
)

// Precedence is the order in which a platform tries the path conditions
// of its routes; the first that holds carries the request.
type Precedence int

const (
	// Listed: in the order written (Istio "http" entries).
	Listed Precedence = iota
	// GatewayAPI: Exact before PathPrefix, longer prefix first, then a
	// match with a method before one without (Gateway API HTTPRouteRule
	// precedence); regular expressions, whose rank is
	// implementation-specific, after both.
	GatewayAPI
	// Ingress: Exact before Prefix, longer path first (Kubernetes Ingress
	// "Multiple matches").
	Ingress
	// APIGateway: a path without a greedy "{proxy+}" before one with it,
	// more literal segments first, a method before "ANY" (API Gateway
	// routing of REST and HTTP APIs).
	APIGateway
	// Kong: a route with a method before one without, regular
	// expressions (as written) before prefixes, a longer prefix first
	// (Kong's router priorities).
	Kong
)

// Candidate is one path condition of a route.
type Candidate struct {
	Path   *Matcher // nil: every path
	Method string   // "" or "ANY": every method
	Index  int      // the caller's, carried along
}

// Sort orders candidates (given in listing order) as the platform tries
// them; ties keep the listing order.
func Sort(p Precedence, cs []Candidate) {
	switch p {
	case GatewayAPI:
		slices.SortStableFunc(cs, func(a, b Candidate) int {
			return cmp.Or(
				cmp.Compare(gatewayRank(a.Path), gatewayRank(b.Path)),
				-cmp.Compare(pathLen(a.Path), pathLen(b.Path)),
				cmp.Compare(anyMethod(a.Method), anyMethod(b.Method)),
			)
		})
	case Ingress:
		slices.SortStableFunc(cs, func(a, b Candidate) int {
			return cmp.Or(
				cmp.Compare(exactFirst(a.Path), exactFirst(b.Path)),
				-cmp.Compare(pathLen(a.Path), pathLen(b.Path)),
			)
		})
	case Kong:
		slices.SortStableFunc(cs, func(a, b Candidate) int {
			return cmp.Or(
				cmp.Compare(anyMethod(a.Method), anyMethod(b.Method)),
				cmp.Compare(regexFirst(a.Path), regexFirst(b.Path)),
				-cmp.Compare(prefixLen(a.Path), prefixLen(b.Path)),
			)
		})
	case APIGateway:
		slices.SortStableFunc(cs, func(a, b Candidate) int {
			return cmp.Or(
				cmp.Compare(greedy(a.Path), greedy(b.Path)),
				-cmp.Compare(literals(a.Path), literals(b.Path)),
				cmp.Compare(anyMethod(a.Method), anyMethod(b.Method)),
			)
		})
	}
}

func gatewayRank(m *Matcher) int {
	switch {
	case m == nil:
		return 1 // an absent match is PathPrefix "/"
	case m.Kind == Exact:
		return 0
	case m.Kind == Regex:
		return 2
	}
	return 1
}

func exactFirst(m *Matcher) int {
	if m != nil && m.Kind == Exact {
		return 0
	}
	return 1
}

func regexFirst(m *Matcher) int {
	if m != nil && m.Kind == Regex {
		return 0
	}
	return 1
}

// prefixLen ranks prefixes by length; regular expressions keep the
// order written.
func prefixLen(m *Matcher) int {
	if m != nil && m.Kind == Regex {
		return 0
	}
	return pathLen(m)
}

func pathLen(m *Matcher) int {
	if m == nil {
		return 1 // "/"
	}
	return len(m.Value)
}

func anyMethod(method string) int {
	if method == "" || method == "ANY" {
		return 1
	}
	return 0
}

func greedy(m *Matcher) int {
	if m != nil && strings.Contains(m.Value, "+}") {
		return 1
	}
	return 0
}

func literals(m *Matcher) int {
	if m == nil {
		return 0
	}
	n := 0
	for _, s := range segments(m.Value) {
		if !isParam(s) {
			n++
		}
	}
	return n
}
