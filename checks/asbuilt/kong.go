package asbuilt

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/idemlint/idemlint/checks/pathmatch"
)

// Kong: a decK / declarative configuration (kong.yaml with
// _format_version, as "deck gateway dump" writes it). Field names are
// those of Kong/kong kong/db/schema/entities (services, routes, plugins)
// and of the cors and request-transformer plugins' schemas.

// Kong is the platform's name in findings.
const Kong Platform = "kong"

// kongKind is the kind an edge's as_built entry names a service by.
const kongKind = "KongService"

// kong is the platform as platforms lists it.
var kong = &platform{
	name:   Kong,
	export: &exportReader{keys: []string{"_format_version"}, is: isKongConfig, read: (*fileRead).kong},
	kinds: []kindReader{
		{kind: "Service", groups: []string{"v1"}, word: kongRetriesAnnotation, read: (*fileRead).kongBackendService},
	},
	defaults: []*Default{KongRetries, KongRetryOn, KongRetryNonIdempotent, KongReadTimeout, KongCORSHeaders},
}

// kongRetriesAnnotation, on the Kubernetes Service an HTTPRoute under
// Kong sends to, sets the retries of the Kong service Kong's ingress
// controller makes of it (Kong/kubernetes-ingress-controller
// internal/annotations: konghq.com/retries).
const kongRetriesAnnotation = "konghq.com/retries"

// The defaults it relies on.
var (
	KongRetries = &Default{
		ID:      "kong.retries",
		Setting: "services[].retries",
		Value:   "5",
		Source:  "Kong/kong kong/db/schema/entities/services.lua: retries default 5, granted even with one target",
	}
	KongRetryOn = &Default{
		ID:      "kong.retry-on",
		Setting: "the conditions of a service's retries",
		Value:   "error timeout",
		Source:  "Kong/kong kong/templates/nginx_kong.lua writes no proxy_next_upstream, so nginx's default of src/http/ngx_http_upstream.c applies",
	}
	KongRetryNonIdempotent = &Default{
		ID:      "kong.retry-non-idempotent",
		Setting: "proxy_next_upstream non_idempotent",
		Value:   "false",
		Source:  "nginx src/http/ngx_http_upstream.c ngx_http_upstream_next: POST, LOCK and PATCH are not passed to the next try once sent; Kong's template does not change it",
	}
	KongReadTimeout = &Default{
		ID:      "kong.read-timeout",
		Setting: "services[].read_timeout (milliseconds, each try)",
		Value:   "60000",
		Source:  "Kong/kong kong/db/schema/entities/services.lua: read_timeout default 60000",
	}
	KongCORSHeaders = &Default{
		ID:      "kong.cors-headers",
		Setting: "cors plugin config.headers",
		Value:   "the headers the preflight asks for (Access-Control-Request-Headers) are allowed",
		Source:  "Kong/kong kong/plugins/cors/handler.lua: without config.headers the requested headers are echoed",
	}
)

// isKongConfig reports whether root is a declarative configuration.
func isKongConfig(r *reader, root *yaml.Node) bool {
	n := r.visit(r.field(root, "_format_version"))
	return n != nil && n.Kind == yaml.ScalarNode
}

// kongPlugins are the plugins idemlint reads, by name, at one scope.
type kongPlugins map[string]*yaml.Node

// kongReadPlugins are the plugin names read.
var kongReadPlugins = map[string]bool{"cors": true, "request-transformer": true, "request-transformer-advanced": true}

func (f *fileRead) kong(root *yaml.Node) {
	// Plugins apply to a route, else to its service, else globally, one
	// plugin of a name at the narrowest scope; one scoped to a consumer
	// applies to that consumer's requests only and is not read.
	global := kongPlugins{}
	byService, byRoute := map[string]kongPlugins{}, map[string]kongPlugins{}
	for _, p := range f.items(f.field(root, "plugins"), "plugins") {
		if f.field(p, "consumer") != nil || f.field(p, "consumer_group") != nil {
			continue
		}
		service, route := f.kongRef(f.field(p, "service")), f.kongRef(f.field(p, "route"))
		switch {
		case route != "":
			f.addPlugin(scopeOf(byRoute, route), p)
		case service != "":
			f.addPlugin(scopeOf(byService, service), p)
		default:
			f.addPlugin(global, p)
		}
	}
	// A service is named within its workspace, Kong's "default" when the
	// file names none; it stands in the namespace's place.
	workspace := "default"
	if t, ok := f.text(f.field(root, "_workspace"), "_workspace"); ok && t.Value != "" {
		workspace = t.Value
	}
	type service struct {
		res  *Resource
		node *yaml.Node
	}
	var services []service
	byName := map[string]*Resource{}
	for _, s := range f.items(f.field(root, "services"), "services") {
		if enabled, _, ok := f.boolean(f.field(s, "enabled"), "services.enabled"); ok && !enabled {
			continue
		}
		name, _ := f.text(f.field(s, "name"), "services.name")
		res := &Resource{Platform: Kong, Kind: kongKind, Name: name, Namespace: workspace, At: f.pos(f.visit(s)), Traffic: AnyTraffic, fingerprint: fingerprint(s)}
		if name.At.Line == 0 {
			res.Name.At = res.At
		}
		f.resources = append(f.resources, res)
		services = append(services, service{res, s})
		for _, key := range []string{name.Value, f.kongRef(f.field(s, "id"))} {
			if key != "" {
				byName[key] = res
			}
		}
		for _, p := range f.items(f.field(s, "plugins"), "services.plugins") {
			for _, key := range []string{name.Value, f.kongRef(f.field(s, "id"))} {
				if key != "" {
					f.addPlugin(scopeOf(byService, key), p)
				}
			}
		}
	}
	routesOf := map[*Resource][]*yaml.Node{}
	for _, s := range services {
		routesOf[s.res] = f.items(f.field(s.node, "routes"), "services.routes")
	}
	for _, r := range f.items(f.field(root, "routes"), "routes") {
		if res := byName[f.kongRef(f.field(r, "service"))]; res != nil {
			routesOf[res] = append(routesOf[res], r)
		}
	}
	for _, s := range services {
		backend, retry, nonIdempotent, problems := f.kongService(s.node, s.res.At)
		f.problems = append(f.problems, problems...)
		servicePlugins := kongPlugins{}
		for _, key := range []string{s.res.Name.Value, f.kongRef(f.field(s.node, "id"))} {
			for name, p := range byService[key] {
				servicePlugins[name] = p
			}
		}
		for _, r := range routesOf[s.res] {
			rt := &Route{Resource: s.res, At: f.pos(f.visit(r)), Retry: retry, NonIdempotent: nonIdempotent}
			if backend.Value != "" {
				rt.Backends = []Text{backend}
			}
			rt.Matches = f.kongMatches(r, rt.At)
			routePlugins := kongPlugins{}
			for _, p := range f.items(f.field(r, "plugins"), "routes.plugins") {
				f.addPlugin(routePlugins, p)
			}
			for _, key := range []string{f.kongRef(f.field(r, "name")), f.kongRef(f.field(r, "id"))} {
				for name, p := range byRoute[key] {
					if routePlugins[name] == nil {
						routePlugins[name] = p
					}
				}
			}
			plugin := func(name string) *yaml.Node {
				for _, scope := range []kongPlugins{routePlugins, servicePlugins, global} {
					if p := scope[name]; p != nil {
						return p
					}
				}
				return nil
			}
			if p := plugin("cors"); p != nil {
				rt.CORS = f.kongCORS(p)
			}
			for _, name := range []string{"request-transformer", "request-transformer-advanced"} {
				if p := plugin(name); p != nil {
					for _, h := range f.texts(f.path(p, "config", "remove", "headers"), name+" config.remove.headers") {
						rt.Removed = append(rt.Removed, Header{Name: h.Value, At: h.At, Field: name + " config.remove.headers"})
					}
				}
			}
			s.res.Routes = append(s.res.Routes, rt)
		}
		s.res.rank(pathmatch.Kong)
	}
}

// kongRef reads a reference to a service or route: its name or id, or
// a mapping holding either (decK writes both forms).
func (f *fileRead) kongRef(n *yaml.Node) string {
	v := f.visit(n)
	if v == nil || isNull(v) {
		return ""
	}
	if v.Kind == yaml.MappingNode {
		if t, ok := f.text(f.field(v, "name"), "name"); ok {
			return t.Value
		}
		t, _ := f.text(f.field(v, "id"), "id")
		return t.Value
	}
	t, _ := f.text(n, "reference")
	return t.Value
}

// addPlugin records the plugin p at scope when idemlint reads it and it
// is enabled; the first of a name at one scope is used.
func (f *fileRead) addPlugin(scope kongPlugins, p *yaml.Node) {
	name, _ := f.text(f.field(p, "name"), "plugins.name")
	if !kongReadPlugins[name.Value] {
		return
	}
	if enabled, _, ok := f.boolean(f.field(p, "enabled"), "plugins.enabled"); ok && !enabled {
		return
	}
	if scope[name.Value] == nil {
		scope[name.Value] = p
	}
}

// scopeOf returns the plugins of the service or route key.
func scopeOf(scopes map[string]kongPlugins, key string) kongPlugins {
	if scopes[key] == nil {
		scopes[key] = kongPlugins{}
	}
	return scopes[key]
}

// kongService reads a service's backend (the first DNS label of its
// host, or of its url's) and its retry: retries (default 5) more tries
// on nginx's conditions, POST, LOCK and PATCH apart, each try bounded by
// read_timeout.
func (f *fileRead) kongService(s *yaml.Node, at Pos) (backend Text, retry Retry, nonIdempotent *Retry, problems []Problem) {
	host, ok := f.text(f.field(s, "host"), "services.host")
	if !ok {
		if u, ok := f.text(f.field(s, "url"), "services.url"); ok {
			if parsed, err := url.Parse(u.Value); err == nil {
				host = Text{Value: parsed.Hostname(), At: u.At}
			} else {
				problems = append(problems, Problem{At: u.At, Message: "services.url " + strconv.Quote(u.Value) + " is not a URL"})
			}
		}
	}
	label, _, _ := strings.Cut(host.Value, ".")
	backend = Text{Value: label, At: host.At}

	retries := defaulted(KongRetries, at)
	if t, ok := f.text(f.field(s, "retries"), "services.retries"); ok {
		if n, err := strconv.Atoi(t.Value); err != nil || n < 0 {
			problems = append(problems, Problem{At: t.At, Message: "services.retries is " + strconv.Quote(t.Value) + ", not a whole number"})
		} else {
			retries = written(t)
		}
	}
	n, _ := strconv.Atoi(retries.Value)
	tries := &setting{Value: strconv.Itoa(n + 1), From: retries.From}
	next, unsafe := defaulted(KongRetryOn, at), defaulted(KongRetryNonIdempotent, at)
	retry, _ = nginxRetry(next, tries, unsafe, false)
	post, _ := nginxRetry(next, tries, unsafe, true)

	timeout := defaulted(KongReadTimeout, at)
	if t, ok := f.text(f.field(s, "read_timeout"), "services.read_timeout"); ok {
		if ms, err := strconv.Atoi(t.Value); err != nil || ms <= 0 {
			problems = append(problems, Problem{At: t.At, Message: "services.read_timeout is " + strconv.Quote(t.Value) + ", not a positive number of milliseconds"})
		} else {
			timeout = written(t)
		}
	}
	ms, _ := strconv.Atoi(timeout.Value)
	for _, r := range []*Retry{&retry, &post} {
		r.PerTryTimeout, r.PerTryTimeoutFrom = time.Duration(ms)*time.Millisecond, timeout.From
	}
	return backend, retry, &post, problems
}

// kongMatches reads a route's paths and methods: each path with each
// method. A path starting with "~" is a regular expression anchored at
// the path's start; any other is a string prefix. Conditions on headers,
// SNIs or addresses hold for some requests only.
func (f *fileRead) kongMatches(r *yaml.Node, at Pos) []Match {
	partial := ""
	for _, k := range []string{"headers", "snis", "sources", "destinations"} {
		if v := f.visit(f.field(r, k)); v != nil && !isNull(v) && len(v.Content) > 0 {
			partial = k
			break
		}
	}
	paths := []*pathmatch.Matcher{nil}
	pathsAt := []Pos{at}
	if written := f.texts(f.field(r, "paths"), "routes.paths"); len(written) > 0 {
		paths, pathsAt = nil, nil
		for _, p := range written {
			if re, ok := strings.CutPrefix(p.Value, "~"); ok {
				paths = append(paths, f.matcher(pathmatch.Regex, Text{Value: "(?:" + re + ").*", At: p.At}, "routes.paths"))
			} else {
				paths = append(paths, f.matcher(pathmatch.Prefix, p, "routes.paths"))
			}
			pathsAt = append(pathsAt, p.At)
		}
	}
	methods := []*pathmatch.Matcher{nil}
	if written := f.texts(f.field(r, "methods"), "routes.methods"); len(written) > 0 {
		methods = nil
		for _, m := range written {
			m.Value = strings.ToUpper(m.Value)
			methods = append(methods, f.matcher(pathmatch.Exact, m, "routes.methods"))
		}
	}
	var out []Match
	for i, p := range paths {
		for _, m := range methods {
			out = append(out, Match{Path: p, Method: m, At: pathsAt[i], Partial: partial})
		}
	}
	return out
}

// kongCORS reads a cors plugin: config.headers, or, when it lists none,
// the requested headers echoed; config.credentials.
func (f *fileRead) kongCORS(p *yaml.Node) *CORS {
	config := f.field(p, "config")
	c := &CORS{At: f.pos(f.visit(p))}
	if h := f.field(config, "headers"); h != nil {
		c.AllowHeaders = f.texts(h, "cors config.headers")
		c.AllowHeadersFrom = Origin{At: f.pos(f.visit(h))}
	}
	if len(c.AllowHeaders) == 0 {
		c.Echo, c.AllowHeadersFrom = true, defaulted(KongCORSHeaders, c.At).From
	}
	if v, at, ok := f.boolean(f.field(config, "credentials"), "cors config.credentials"); ok {
		c.Credentials, c.CredentialsFrom = v, Origin{At: at}
	}
	return c
}

// kongBackendService reads a Kubernetes Service's konghq.com/retries
// annotation, which an HTTPRoute under Kong that sends to the Service
// retries by (kongRule). A Service without it says nothing to Kong's
// retries and is skipped like any other.
func (f *fileRead) kongBackendService(root *yaml.Node) {
	annotation := f.path(root, "metadata", "annotations", kongRetriesAnnotation)
	if annotation == nil {
		f.skip([]byte("Service"))
		return
	}
	res := f.resource(Kong, "Service", root)
	t, ok := f.text(annotation, kongRetriesAnnotation)
	if !ok {
		return
	}
	if n, err := strconv.Atoi(t.Value); err != nil || n < 0 {
		f.problems = append(f.problems, Problem{At: t.At, Message: kongRetriesAnnotation + " is " + strconv.Quote(t.Value) + ", not a whole number"})
		return
	}
	res.kongRetries = written(t)
}
