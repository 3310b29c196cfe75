package reference

import (
	"strings"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// router finds the declared operation a request is for: same method, and a
// path matching the operation's path template, where a segment written
// "{name}" matches any one non-empty segment. When several templates
// match, the more literal one wins (/orders/search beats /orders/{id}),
// comparing segments from the left; among equals the first declared wins.
type router struct {
	routes []route
}

type route struct {
	method   string
	segments []segment
}

type segment struct {
	literal string
	param   bool
}

func newRouter(ops []boundary.Operation) *router {
	r := &router{routes: make([]route, len(ops))}
	for i, op := range ops {
		rt := route{method: op.Method.Value}
		for s := range strings.SplitSeq(strings.TrimPrefix(op.Path.Value, "/"), "/") {
			if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
				rt.segments = append(rt.segments, segment{param: true})
			} else {
				rt.segments = append(rt.segments, segment{literal: s})
			}
		}
		r.routes[i] = rt
	}
	return r
}

// match returns the index of the operation for method and path, or -1.
func (r *router) match(method, path string) int {
	best := -1
	for i := range r.routes {
		rt := &r.routes[i]
		if rt.method != method || !rt.matches(path) {
			continue
		}
		if best < 0 || rt.moreLiteral(&r.routes[best]) {
			best = i
		}
	}
	return best
}

func (rt *route) matches(path string) bool {
	rest, ok := strings.CutPrefix(path, "/")
	if !ok {
		return false
	}
	for i, seg := range rt.segments {
		s, next, more := strings.Cut(rest, "/")
		if more != (i < len(rt.segments)-1) {
			return false // more or fewer segments than the template
		}
		if seg.param && s == "" || !seg.param && s != seg.literal {
			return false
		}
		rest = next
	}
	return true
}

// moreLiteral reports whether rt, at the first segment where it and other
// differ in kind, has a literal where other has a parameter. Both matched
// the same path, so they have as many segments.
func (rt *route) moreLiteral(other *route) bool {
	for i, seg := range rt.segments {
		if seg.param != other.segments[i].param {
			return !seg.param
		}
	}
	return false
}

// lastParam returns the value of the last segment of path when the
// template of operation i ends with a parameter (/orders/{id} -> the id).
func (r *router) lastParam(i int, path string) (string, bool) {
	segs := r.routes[i].segments
	if len(segs) == 0 || !segs[len(segs)-1].param {
		return "", false
	}
	return path[strings.LastIndexByte(path, '/')+1:], true
}
