// Package pathmatch matches the paths a proxy routes on against the path
// templates boundary documents and OpenAPI descriptions declare
// ("/orders/{id}"), so that the OpenAPI bridge (docs/openapi.md, Matching
// operations) and the as-built binding (docs/as-built.md, Binding
// resources to hops) agree on what "the same path" means.
//
// A template's parameter stands for one non-empty segment. A route is
// matched against the template itself, not against sample requests:
// Match says whether the route carries every request of the template (a
// Gateway API prefix "/orders" carries "/orders/{id}", "/order" does
// not), Overlaps whether it carries some (the exact "/orders/42"). A
// regular expression is tried against the template with every parameter
// replaced by sample segments.
//
// The package is a leaf: it imports nothing of ours.
package pathmatch

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
)

// Shape is a path template with every parameter name removed:
// "/orders/{id}/items/{n}" -> "/orders/{}/items/{}". Two templates with
// one shape describe the same requests. A trailing slash counts (servers
// route "/orders/" and "/orders" apart).
func Shape(template string) string { return fill(template, "{}") }

// Kind is how a route's value is compared with a template.
type Kind int

const (
	// Exact: the path itself ("/orders/42", one request of
	// "/orders/{id}").
	Exact Kind = iota
	// Prefix is a string prefix (Istio "prefix", Envoy): "/ord" matches
	// "/orders/{id}".
	Prefix
	// SegmentPrefix is a prefix of whole segments (Gateway API
	// "PathPrefix", Ingress "Prefix"): "/orders" and "/orders/" match
	// "/orders/{id}", "/ord" does not.
	SegmentPrefix
	// Regex is an RE2 expression the whole path must match (Istio "regex",
	// Gateway API "RegularExpression"), tried against the template with
	// its parameters replaced by sample segments.
	Regex
	// Template is itself a template whose parameters match any segment,
	// and whose greedy "{name+}" parameter, last, matches one or more
	// segments (AWS API Gateway paths).
	Template
)

var kindNames = [...]string{"exact", "prefix", "segment prefix", "regex", "template"}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Matcher is a route's path condition.
type Matcher struct {
	Kind  Kind
	Value string
	re    *lazyRegexp // Regex only
}

// lazyRegexp is a regular expression parsed when its route is read and
// compiled when first tried: compiling is most of what reading a
// regular-expression route costs, and most routes of a repository are
// never tried (no boundary edge is bound to them).
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// compiled returns the expression, compiled at the first call; nil for
// none, or should it not compile after all (New parsed it, and
// FuzzNewRegex holds that what parses compiles).
func (l *lazyRegexp) compiled() *regexp.Regexp {
	if l == nil {
		return nil
	}
	l.once.Do(func() { l.re, _ = regexp.Compile(l.expr) })
	return l.re
}

// New returns the matcher of kind over value; a regular expression that
// does not compile (RE2 syntax) is an error saying why.
func New(kind Kind, value string) (Matcher, error) {
	m := Matcher{Kind: kind, Value: value}
	if kind == Regex {
		expr := `^(?:` + value + `)$`
		// Parsing finds every error compiling would (regexp.Compile's
		// errors are syntax.Parse's), so compiling later cannot fail.
		if _, err := syntax.Parse(expr, syntax.Perl); err != nil {
			return Matcher{}, fmt.Errorf("not an RE2 regular expression: %w", err)
		}
		m.re = &lazyRegexp{expr: expr}
	}
	return m, nil
}

// samples stand for a parameter when a regular expression is tried: one
// of them is what a route written for "/orders/{id}" usually expects
// (digits, a word, a UUID).
var samples = []string{"1", "a", "a1", "123e4567-e89b-42d3-a456-426614174000"}

// Match reports whether the route carries the requests to template: it
// holds whatever segment each parameter stands for ("/orders" as a
// segment prefix carries "/orders/{id}"; the exact "/orders/42" carries
// only one of its requests, so not the template). This is how an
// operation is bound to the route the platform picks for it.
func (m Matcher) Match(template string) bool {
	switch m.Kind {
	case Exact:
		return Shape(m.Value) == Shape(template)
	case Prefix:
		literal, _, _ := strings.Cut(template, "{")
		return strings.HasPrefix(literal, m.Value) || Shape(m.Value) == Shape(template)
	case SegmentPrefix:
		return segmentPrefix(segments(m.Value), segments(template), false)
	case Regex:
		return m.regex(template)
	case Template:
		return templateMatch(segments(m.Value), segments(template))
	}
	return false
}

// Overlaps reports whether the route carries some of the requests to
// template (the exact "/orders/42" overlaps "/orders/{id}"): whether a
// route written for a method may be meant for that operation.
func (m Matcher) Overlaps(template string) bool {
	switch m.Kind {
	case Exact:
		return describes(template, m.Value, false)
	case Prefix:
		return describes(template, m.Value, true)
	case SegmentPrefix:
		return segmentPrefix(segments(m.Value), segments(template), true)
	case Regex:
		return m.regex(template)
	case Template:
		return templateMatch(segments(m.Value), segments(Shape(template))) || templateMatch(segments(Shape(template)), segments(m.Value))
	}
	return false
}

// regex tries the expression with the template's parameters replaced
// by each sample segment.
func (m Matcher) regex(template string) bool {
	re := m.re.compiled()
	return re != nil && slices.ContainsFunc(samples, func(s string) bool { return re.MatchString(fill(template, s)) })
}

// MatchString reports whether s, a plain string such as a method, is
// matched: exactly, as a string prefix, or by the expression.
func (m Matcher) MatchString(s string) bool {
	switch m.Kind {
	case Prefix:
		return strings.HasPrefix(s, m.Value)
	case Regex:
		re := m.re.compiled()
		return re != nil && re.MatchString(s)
	}
	return s == m.Value
}

// describes reports whether value is a path the template describes or,
// with prefix, a string prefix of one. A parameter takes one non-empty
// segment.
func describes(template, value string, prefix bool) bool {
	for template != "" {
		open := strings.IndexByte(template, '{')
		end := -1
		if open >= 0 {
			end = strings.IndexByte(template[open:], '}')
		}
		if open < 0 || end < 0 {
			open, end = len(template), 0
		}
		literal := template[:open]
		if len(value) < len(literal) {
			return prefix && strings.HasPrefix(literal, value)
		}
		if value[:len(literal)] != literal {
			return false
		}
		value = value[len(literal):]
		if open == len(template) {
			break
		}
		template = template[open+end+1:]
		seg := strings.IndexByte(value, '/')
		if seg < 0 {
			seg = len(value)
		}
		if seg == 0 {
			return prefix && value == ""
		}
		value = value[seg:]
	}
	return value == ""
}

// segments splits a path into its segments, without the empty ones a
// leading, trailing or doubled slash makes: prefixes compare whole
// segments, so "/orders/" and "/orders" are one prefix.
func segments(path string) []string {
	return strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// segmentPrefix: each segment of prefix is the template's (a parameter
// of both, or with some, any segment against a parameter).
func segmentPrefix(prefix, template []string, some bool) bool {
	if len(prefix) > len(template) {
		return false
	}
	for i, seg := range prefix {
		switch {
		case isParam(template[i]) && (some || isParam(seg)):
		case template[i] != seg:
			return false
		}
	}
	return true
}

// templateMatch: a route parameter takes any segment, a greedy one the
// rest (at least one segment); a route literal only the same literal (a
// request to a template parameter reaches the route of that parameter,
// not a route written for one of its values).
func templateMatch(route, template []string) bool {
	for i, seg := range route {
		if isParam(seg) && strings.HasSuffix(seg, "+}") && i == len(route)-1 {
			return len(template) > i
		}
		if i >= len(template) {
			return false
		}
		if !isParam(seg) && seg != template[i] {
			return false
		}
	}
	return len(route) == len(template)
}

// fill replaces every parameter of template with sample.
func fill(template, sample string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(template, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(template[open:], '}')
		if end < 0 {
			break
		}
		b.WriteString(template[:open])
		b.WriteString(sample)
		template = template[open+end+1:]
	}
	b.WriteString(template)
	return b.String()
}
