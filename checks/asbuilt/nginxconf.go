package asbuilt

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idemlint/idemlint/checks/pathmatch"
)

// NGINX: an nginx.conf and the files it includes. Each server block's
// locations that proxy_pass to one upstream (or host) are a resource
// of kind NginxUpstream named after the first DNS label of that name;
// names are nginx's directives (ngx_http_proxy_module,
// ngx_http_upstream_module, ngx_http_core_module).

// NGINX is the platform's name in findings.
const NGINX Platform = "nginx"

// NginxUpstreamKind is the kind an edge's as_built entry names.
const NginxUpstreamKind = "NginxUpstream"

// nginx is the platform as platforms lists it.
var nginx = &platform{
	name: NGINX,
	text: &textReader{exts: []string{".conf"}, is: isNginx, read: (*fileRead).nginxConf},
	defaults: []*Default{NginxConfNextUpstream, NginxConfNextUpstreamTries, NginxConfHostServers,
		NginxConfNonIdempotent, NginxConfReadTimeout, NginxConfUnderscores, NginxConfIgnoreInvalidHeaders},
}

// The defaults it relies on.
var (
	NginxConfNextUpstream = &Default{
		ID:      "nginx.proxy_next_upstream",
		Setting: "proxy_next_upstream",
		Value:   "error timeout",
		Source:  "nginx docs, ngx_http_proxy_module.html#proxy_next_upstream",
		Live:    true,
	}
	NginxConfNextUpstreamTries = &Default{
		ID:      "nginx.proxy_next_upstream_tries",
		Setting: "proxy_next_upstream_tries",
		Value:   "0",
		Source:  "nginx docs, ngx_http_proxy_module.html#proxy_next_upstream_tries: 0, no limit but the upstream's servers",
		Live:    true,
	}
	NginxConfHostServers = &Default{
		ID:      "nginx.upstream-servers",
		Setting: "the servers of a proxy_pass host without an upstream block",
		Value:   "1",
		Source:  "nginx src/http/ngx_http_upstream.c ngx_http_upstream_next: a request is passed to the next server of the upstream; a host name is one",
	}
	NginxConfNonIdempotent = &Default{
		ID:      "nginx.non_idempotent",
		Setting: "proxy_next_upstream non_idempotent",
		Value:   "false",
		Source:  "nginx src/http/ngx_http_upstream.c ngx_http_upstream_next: POST, LOCK and PATCH are not passed to the next server once sent",
		Live:    true,
	}
	NginxConfReadTimeout = &Default{
		ID:      "nginx.proxy_read_timeout",
		Setting: "proxy_read_timeout",
		Value:   "60s",
		Source:  "nginx docs, ngx_http_proxy_module.html#proxy_read_timeout",
	}
	NginxConfUnderscores = &Default{
		ID:      "nginx.underscores_in_headers",
		Setting: "underscores_in_headers",
		Value:   "off",
		Source:  "nginx docs, ngx_http_core_module.html#underscores_in_headers: a header name with \"_\" is invalid, and dropped",
		Live:    true,
	}
	NginxConfIgnoreInvalidHeaders = &Default{
		ID:      "nginx.ignore_invalid_headers",
		Setting: "ignore_invalid_headers",
		Value:   "on",
		Source:  "nginx docs, ngx_http_core_module.html#ignore_invalid_headers",
		Live:    true,
	}
)

// ngxLevel is what a level (http, server, location) inherits and sets.
type ngxLevel struct {
	next, tries, readTimeout, passHeaders, underscores, ignoreInvalid *setting
	// proxyHeaders and addHeaders are those of the nearest level with
	// any: nginx inherits them only into a level that has none.
	proxyHeaders, addHeaders []*ngxDirective
}

func ngxSetting(d *ngxDirective) *setting {
	return &setting{Value: strings.Join(d.args, " "), From: Origin{At: d.at}}
}

// inherit is the level of the block ds inside lv.
func (lv ngxLevel) inherit(ds []*ngxDirective) ngxLevel {
	out := lv
	var headers, adds []*ngxDirective
	for _, d := range ds {
		if d.isBlock {
			continue
		}
		switch d.name {
		case "proxy_next_upstream":
			out.next = ngxSetting(d)
		case "proxy_next_upstream_tries":
			out.tries = ngxSetting(d)
		case "proxy_read_timeout":
			out.readTimeout = ngxSetting(d)
		case "proxy_pass_request_headers":
			out.passHeaders = ngxSetting(d)
		case "underscores_in_headers":
			out.underscores = ngxSetting(d)
		case "ignore_invalid_headers":
			out.ignoreInvalid = ngxSetting(d)
		case "proxy_set_header":
			headers = append(headers, d)
		case "add_header":
			adds = append(adds, d)
		}
	}
	if headers != nil {
		out.proxyHeaders = headers
	}
	if adds != nil {
		out.addHeaders = adds
	}
	return out
}

// ngxServer is a server block read.
type ngxServer struct {
	d     *ngxDirective
	level ngxLevel
	// top are its locations, each holding those nested in it; locations
	// are all of them, each before those nested in it.
	top, locations []*ngxLocation
}

// ngxLocation is a location block: how it matches, its level, and its
// proxy_pass (nil when it passes nowhere).
type ngxLocation struct {
	d        *ngxDirective
	modifier string // "=", "^~", "~", "~*" or "" (a prefix)
	path     string
	level    ngxLevel
	pass     *ngxDirective
	ifAdds   []*ngxDirective // add_header inside its "if" blocks
	// nested are the locations inside it, which inherit its level but
	// not its proxy_pass (nginx passes only where proxy_pass is written,
	// or in an "if" or "limit_except" within).
	nested []*ngxLocation
}

// nginxConf reads an NGINX file's directives; its includes are followed
// once every file is read (readNginx), so that a file an include reaches
// and a walk names too is read once.
func (f *fileRead) nginxConf(data []byte) {
	f.ngx, f.err = parseNginx(f.file, data)
	f.isNginx = true
}

// nginxResources reads the resources of one configuration (a file, its
// includes expanded).
func (f *fileRead) nginxResources(ds []*ngxDirective) {
	upstreams := map[string]*ngxDirective{}
	var servers []*ngxServer
	var walk func(ds []*ngxDirective, lv ngxLevel)
	walk = func(ds []*ngxDirective, lv ngxLevel) {
		for _, d := range ds {
			switch {
			case !d.isBlock:
			case d.name == "http":
				walk(d.block, lv.inherit(d.block))
			case d.name == "upstream" && len(d.args) == 1:
				if upstreams[d.args[0]] == nil {
					upstreams[d.args[0]] = d
				}
			case d.name == "server":
				s := &ngxServer{d: d, level: lv.inherit(d.block)}
				s.top = ngxLocations(d.block, s.level)
				s.locations = ngxFlatten(s.top, nil)
				servers = append(servers, s)
			}
		}
	}
	// The top level is read as http's: a conf.d file nothing includes
	// holds server and upstream blocks.
	walk(ds, ngxLevel{}.inherit(ds))
	for _, s := range servers {
		var labels []string
		for _, loc := range s.locations {
			if label, _, ok := ngxBackend(loc.pass); ok && !slices.Contains(labels, label) {
				labels = append(labels, label)
			}
		}
		for _, label := range labels {
			f.nginxResource(s, label, upstreams)
		}
	}
}

// ngxLocations are the location blocks of ds, each with its level and
// the locations nested in it.
func ngxLocations(ds []*ngxDirective, lv ngxLevel) []*ngxLocation {
	var out []*ngxLocation
	for _, d := range ds {
		if !d.isBlock || d.name != "location" || len(d.args) == 0 {
			continue
		}
		loc := &ngxLocation{d: d, path: d.args[len(d.args)-1], level: lv.inherit(d.block)}
		if len(d.args) == 2 {
			loc.modifier = d.args[0]
		}
		for _, c := range d.block {
			switch {
			case c.name == "proxy_pass" && !c.isBlock && len(c.args) == 1:
				loc.pass = c
			case c.name == "if" && c.isBlock:
				for _, a := range c.block {
					if a.name == "add_header" && !a.isBlock {
						loc.ifAdds = append(loc.ifAdds, a)
					}
				}
			}
		}
		if !strings.HasPrefix(loc.path, "@") { // a named location serves no path
			loc.nested = ngxLocations(d.block, loc.level)
			out = append(out, loc)
		}
	}
	return out
}

// ngxFlatten appends locs to out, each followed by those nested in it.
func ngxFlatten(locs, out []*ngxLocation) []*ngxLocation {
	for _, loc := range locs {
		out = ngxFlatten(loc.nested, append(out, loc))
	}
	return out
}

// ngxBackend returns the backend a proxy_pass names: the first DNS label
// of its host (an IP address whole), and the host; false for none, a
// variable, or a Unix socket.
func ngxBackend(pass *ngxDirective) (label, host string, ok bool) {
	if pass == nil {
		return "", "", false
	}
	rest, found := strings.CutPrefix(pass.args[0], "http://")
	if !found {
		if rest, found = strings.CutPrefix(pass.args[0], "https://"); !found {
			return "", "", false
		}
	}
	host, _, _ = strings.Cut(rest, "/")
	if strings.Contains(host, "$") || strings.HasPrefix(host, "unix:") || host == "" {
		return "", "", false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if net.ParseIP(strings.Trim(host, "[]")) != nil {
		return host, host, true
	}
	label, _, _ = strings.Cut(host, ".")
	return label, host, true
}

// nginxResource is the resource of server s's locations that pass to
// label. A request goes to the location nginx picks among all of s's
// (ngxLocation.pick): one passing elsewhere carries it away from this
// upstream, and the resource does not carry it.
func (f *fileRead) nginxResource(s *ngxServer, label string, upstreams map[string]*ngxDirective) {
	res := &Resource{Platform: NGINX, Kind: NginxUpstreamKind, At: s.d.at, Traffic: AnyTraffic}
	for _, d := range s.d.block {
		if d.name == "server_name" {
			for _, name := range d.args {
				res.Hosts = append(res.Hosts, Text{Value: name, At: d.at})
			}
		}
	}
	cands := make(map[*ngxLocation]*ngxCandidate, len(s.locations))
	for _, loc := range s.locations {
		kind, value := pathmatch.Prefix, loc.path
		switch loc.modifier {
		case "=":
			kind = pathmatch.Exact
		case "~", "~*":
			// nginx searches the path for the expression; pathmatch
			// anchors it.
			kind, value = pathmatch.Regex, ".*(?:"+loc.path+").*"
			if loc.modifier == "~*" {
				value = "(?i)" + value
			}
		}
		c := &ngxCandidate{loc: loc}
		cands[loc] = c
		c.match = Match{Path: f.matcher(kind, Text{Value: value, At: loc.d.at}, "location"), At: loc.d.at}
		l, host, ok := ngxBackend(loc.pass)
		if !ok || l != label {
			continue
		}
		if res.Name.Value == "" {
			res.Name = Text{Value: label, At: loc.pass.at}
			if up := upstreams[host]; up != nil {
				res.Name.At = up.at
			}
		}
		c.route = &Route{Resource: res, At: loc.d.at, Matches: []Match{c.match}, Backends: []Text{{Value: l, At: loc.pass.at}}}
		f.nginxRoute(c.route, loc, s, upstreams[host])
		res.Routes = append(res.Routes, c.route)
	}
	res.pick = func(_, template string) (*Route, *Match, bool) {
		loc, _ := ngxPick(s.top, func(l *ngxLocation) bool { return cands[l].match.Holds("", template) })
		if loc == nil || cands[loc].route == nil {
			return nil, nil, false
		}
		return cands[loc].route, &cands[loc].route.Matches[0], true
	}
	f.resources = append(f.resources, res)
}

// ngxCandidate is a location of a server: how it matches, and its route
// when it passes to the resource's upstream.
type ngxCandidate struct {
	loc   *ngxLocation
	match Match
	route *Route
}

// ngxPick returns the location nginx picks among locs, the locations of
// one level, for a request whose path holds matches (nginx's
// ngx_http_core_find_location): an exact location; else the longest
// prefix, in whose nested locations the search goes on, an exact or
// expression found there being final; then, unless that prefix is "^~",
// the first expression that matches, in the order written (and in its
// nested locations, the one found there); else the longest prefix, or
// the nested prefix found in it. final reports a pick that an expression
// of an enclosing level does not override. Nil when none matches.
func ngxPick(locs []*ngxLocation, holds func(*ngxLocation) bool) (picked *ngxLocation, final bool) {
	var longest *ngxLocation
	for _, l := range locs {
		switch l.modifier {
		case "=":
			if holds(l) {
				return l, true
			}
		case "", "^~":
			if holds(l) && (longest == nil || len(l.path) > len(longest.path)) {
				longest = l
			}
		}
	}
	if longest != nil {
		picked = longest
		inner, final := ngxPick(longest.nested, holds)
		if final {
			return inner, true
		}
		if inner != nil {
			picked = inner
		}
		if longest.modifier == "^~" {
			return picked, false
		}
	}
	for _, l := range locs {
		if (l.modifier == "~" || l.modifier == "~*") && holds(l) {
			if inner, _ := ngxPick(l.nested, holds); inner != nil {
				return inner, true
			}
			return l, true
		}
	}
	return picked, false
}

// nginxRoute sets what location loc of server s does to the requests it
// passes to upstream up (nil: a host name).
func (f *fileRead) nginxRoute(rt *Route, loc *ngxLocation, s *ngxServer, up *ngxDirective) {
	lv, at := loc.level, loc.d.at
	next, tries := lv.next, lv.tries
	if next == nil {
		next = defaulted(NginxConfNextUpstream, at)
	}
	if tries == nil {
		tries = defaulted(NginxConfNextUpstreamTries, at)
	}
	servers := defaulted(NginxConfHostServers, loc.pass.at)
	if up != nil {
		n := 0
		for _, d := range up.block {
			if d.name == "server" && !d.isBlock && !slices.Contains(d.args, "down") {
				n++
			}
		}
		servers = &setting{Value: strconv.Itoa(n), From: Origin{At: up.at}}
	}
	nonIdempotent := defaulted(NginxConfNonIdempotent, at)
	var problems []Problem
	rt.Retry, problems = nginxConfRetry(next, tries, servers, nonIdempotent, false)
	post, _ := nginxConfRetry(next, tries, servers, nonIdempotent, true)
	rt.NonIdempotent = &post
	f.problems = append(f.problems, problems...)
	timeout := lv.readTimeout
	if timeout == nil {
		timeout = defaulted(NginxConfReadTimeout, at)
	}
	if d, ok := ngxDuration(timeout.Value); ok {
		for _, r := range []*Retry{&rt.Retry, rt.NonIdempotent} {
			r.PerTryTimeout, r.PerTryTimeoutFrom = d, timeout.From
		}
	} else {
		f.problems = append(f.problems, Problem{At: timeout.From.At, Message: "proxy_read_timeout is " + strconv.Quote(timeout.Value) + ", not an NGINX time"})
	}
	for _, d := range lv.proxyHeaders {
		if len(d.args) != 2 {
			continue
		}
		h := Header{Name: d.args[0], At: d.at, Field: "proxy_set_header"}
		if d.args[1] == "" {
			rt.Removed = append(rt.Removed, h)
		} else {
			rt.Set = append(rt.Set, h)
		}
	}
	if p := lv.passHeaders; p != nil && p.Value == "off" {
		rt.Forwards = &Forwarding{Headers: rt.Set, From: p.From}
	}
	underscores, ignoreInvalid := lv.underscores, lv.ignoreInvalid
	if underscores == nil {
		underscores = defaulted(NginxConfUnderscores, s.d.at)
	}
	if ignoreInvalid == nil {
		ignoreInvalid = defaulted(NginxConfIgnoreInvalidHeaders, s.d.at)
	}
	if underscores.Value != "on" && ignoreInvalid.Value != "off" {
		rt.DropsUnderscores = &underscores.From
	}
	adds := lv.addHeaders
	if !slices.ContainsFunc(adds, isAllowHeaders) {
		adds = loc.ifAdds // the preflight answered in an "if ($request_method = OPTIONS)"
	}
	for _, d := range adds {
		if !isAllowHeaders(d) {
			continue
		}
		rt.CORS = &CORS{At: d.at, AllowHeaders: splitList(Text{Value: d.args[1], At: d.at}), AllowHeadersFrom: Origin{At: d.at}}
		for _, c := range adds {
			if len(c.args) >= 2 && strings.EqualFold(c.args[0], "Access-Control-Allow-Credentials") {
				rt.CORS.Credentials, rt.CORS.CredentialsFrom = c.args[1] == "true", Origin{At: c.at}
			}
		}
		break
	}
}

func isAllowHeaders(d *ngxDirective) bool {
	return len(d.args) >= 2 && strings.EqualFold(d.args[0], "Access-Control-Allow-Headers")
}

// ngxDuration reads an NGINX time: "60s", "1m30s", "500ms", "60"
// (seconds).
func ngxDuration(s string) (time.Duration, bool) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	units := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}
	var total time.Duration
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		j := i
		for j < len(s) && (s[j] < '0' || s[j] > '9') {
			j++
		}
		n, err := strconv.Atoi(s[:i])
		unit, ok := units[s[i:j]]
		if err != nil || !ok || time.Duration(n) > (1<<62-total)/unit {
			return 0, false
		}
		total += time.Duration(n) * unit
		s = s[j:]
	}
	return total, true
}
