package asbuilt

import (
	"net"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/idemlint/idemlint/checks/pathmatch"
)

// Envoy: a bootstrap (static_resources), a RouteConfiguration document,
// or an admin config_dump. Field names are those of envoyproxy/envoy
// api/envoy/config/route/v3/route_components.proto, config/cluster/v3,
// config/listener/v3 and the HttpConnectionManager.

// Envoy is the platform's name in findings.
const Envoy Platform = "envoy"

// envoyKind is the kind an edge's as_built entry names a route
// configuration by.
const envoyKind = "EnvoyRouteConfiguration"

// envoy is the platform as platforms lists it.
var envoy = &platform{
	name:     Envoy,
	export:   &exportReader{keys: []string{"static_resources", "virtual_hosts", "configs"}, is: isEnvoyConfig, read: (*fileRead).envoy},
	defaults: []*Default{envoyNoRetry, envoyNumRetries, envoyUnderscores, envoyCORSAllowHeaders},
}

// The defaults it relies on.
var (
	envoyNoRetry = &Default{
		ID:      "envoy.retry-policy",
		Setting: "route retry_policy (none on the route or its virtual host)",
		Value:   "no retry",
		Source:  "envoyproxy/envoy source/common/router/config_impl.cc: a route without a retry policy gets an empty one, retry_on none",
	}
	envoyNumRetries = &Default{
		ID:      "envoy.num-retries",
		Setting: "retry_policy.num_retries",
		Value:   "1",
		Source:  "envoyproxy/envoy api/envoy/config/route/v3/route_components.proto RetryPolicy.num_retries (defaults to 1), source/common/router/config_impl.h",
	}
	envoyUnderscores = &Default{
		ID:      "envoy.headers-with-underscores-action",
		Setting: "HttpConnectionManager common_http_protocol_options.headers_with_underscores_action",
		Value:   "ALLOW",
		Source:  "envoyproxy/envoy api/envoy/config/core/v3/protocol.proto HttpProtocolOptions.headers_with_underscores_action",
	}
	envoyCORSAllowHeaders = &Default{
		ID:      "envoy.cors-allow-headers",
		Setting: "cors policy allow_headers",
		Value:   "none: no Access-Control-Allow-Headers is answered",
		Source:  "envoyproxy/envoy source/extensions/filters/http/cors/cors_filter.cc: Access-Control-Allow-Headers only from allow_headers",
	}
)

// The admin config_dump sections read (envoy.admin.v3).
const (
	clustersDump  = "ClustersConfigDump"
	listenersDump = "ListenersConfigDump"
	routesDump    = "RoutesConfigDump"
)

// isEnvoyConfig reports whether root is a bootstrap, a route
// configuration or a config_dump.
func isEnvoyConfig(r *reader, root *yaml.Node) bool {
	if n := r.visit(r.field(root, "static_resources")); n != nil && n.Kind == yaml.MappingNode {
		return true
	}
	if n := r.visit(r.field(root, "virtual_hosts")); n != nil && n.Kind == yaml.SequenceNode {
		return true
	}
	configs := r.visit(r.field(root, "configs"))
	if configs == nil || configs.Kind != yaml.SequenceNode || len(configs.Content) == 0 {
		return false
	}
	return strings.Contains(dumpType(r, configs.Content[0]), "envoy.admin.")
}

// dumpType is the "@type" of a config_dump section.
func dumpType(r *reader, n *yaml.Node) string {
	t, _ := r.text(r.field(n, "@type"), "@type")
	return t.Value
}

// envoyConfig is what one Envoy document holds that its route
// configurations need: the clusters' backends, and the HTTP connection
// manager that serves each route configuration.
type envoyConfig struct {
	clusters map[string]string
	// managers are by route configuration name; inline are the route
	// configurations written in a connection manager.
	managers map[string]*envoyManager
	inline   []envoyRoutes
}

// envoyManager is what an HTTP connection manager decides for the route
// configuration it serves.
type envoyManager struct {
	underscores *setting // headers_with_underscores_action; nil when not written
	// cors is set when its http_filters hold the CORS filter, without
	// which Envoy answers no preflight and CORS policies do nothing.
	cors bool
}

type envoyRoutes struct {
	config  *yaml.Node
	manager *envoyManager
}

func (f *fileRead) envoy(root *yaml.Node) {
	if f.visit(f.field(root, "virtual_hosts")) != nil && f.field(root, "static_resources") == nil {
		f.envoyRouteConfig(root, nil, nil)
		return
	}
	cfg := &envoyConfig{clusters: map[string]string{}, managers: map[string]*envoyManager{}}
	var routeConfigs []*yaml.Node
	dumped := false // a config_dump with a routes section: its route configurations are all
	if static := f.field(root, "static_resources"); static != nil {
		f.envoyClusters(cfg, f.items(f.field(static, "clusters"), "static_resources.clusters"))
		f.envoyListeners(cfg, f.items(f.field(static, "listeners"), "static_resources.listeners"))
	}
	// A config_dump's bootstrap section is not read: its static resources
	// are in the other sections too.
	for _, section := range f.items(f.field(root, "configs"), "configs") {
		typ := dumpType(f.reader, section)
		switch {
		case strings.HasSuffix(typ, clustersDump):
			for _, list := range []string{"static_clusters", "dynamic_active_clusters"} {
				for _, c := range f.items(f.field(section, list), list) {
					f.envoyClusters(cfg, []*yaml.Node{f.field(c, "cluster")})
				}
			}
		case strings.HasSuffix(typ, listenersDump):
			for _, l := range f.items(f.field(section, "static_listeners"), "static_listeners") {
				f.envoyListeners(cfg, []*yaml.Node{f.field(l, "listener")})
			}
			for _, l := range f.items(f.field(section, "dynamic_listeners"), "dynamic_listeners") {
				f.envoyListeners(cfg, []*yaml.Node{f.path(l, "active_state", "listener")})
			}
		case strings.HasSuffix(typ, routesDump):
			dumped = true
			for _, list := range []string{"static_route_configs", "dynamic_route_configs"} {
				for _, rc := range f.items(f.field(section, list), list) {
					routeConfigs = append(routeConfigs, f.field(rc, "route_config"))
				}
			}
		}
	}
	if !dumped {
		for _, rc := range cfg.inline {
			f.envoyRouteConfig(rc.config, rc.manager, cfg.clusters)
		}
		return
	}
	for _, rc := range routeConfigs {
		name, _ := f.text(f.field(rc, "name"), "route_config.name")
		f.envoyRouteConfig(rc, cfg.managers[name.Value], cfg.clusters)
	}
}

// envoyClusters reads each cluster's backend: its first endpoint's
// address when that is a host name.
func (f *fileRead) envoyClusters(cfg *envoyConfig, clusters []*yaml.Node) {
	for _, c := range clusters {
		name, ok := f.text(f.field(c, "name"), "cluster name")
		if !ok {
			continue
		}
		var address *yaml.Node
		if eps := f.items(f.path(c, "load_assignment", "endpoints"), "load_assignment.endpoints"); len(eps) > 0 {
			if lbs := f.items(f.field(eps[0], "lb_endpoints"), "lb_endpoints"); len(lbs) > 0 {
				address = f.path(lbs[0], "endpoint", "address", "socket_address", "address")
			}
		}
		if t, ok := f.text(address, "socket_address.address"); ok && t.Value != "" && net.ParseIP(t.Value) == nil {
			label, _, _ := strings.Cut(t.Value, ".")
			cfg.clusters[name.Value] = label
		}
	}
}

// envoyListeners reads the HTTP connection managers of listeners: their
// inline route configurations, and which route configuration each
// serves.
func (f *fileRead) envoyListeners(cfg *envoyConfig, listeners []*yaml.Node) {
	for _, l := range listeners {
		chains := f.items(f.field(l, "filter_chains"), "filter_chains")
		if d := f.field(l, "default_filter_chain"); d != nil {
			chains = append(chains, d)
		}
		for _, chain := range chains {
			for _, filter := range f.items(f.field(chain, "filters"), "filters") {
				hcm := f.field(filter, "typed_config")
				name, _ := f.text(f.field(filter, "name"), "filters.name")
				if !strings.HasSuffix(dumpType(f.reader, hcm), ".HttpConnectionManager") && !strings.HasSuffix(name.Value, "http_connection_manager") {
					continue
				}
				m := &envoyManager{}
				if t, ok := f.text(f.path(hcm, "common_http_protocol_options", "headers_with_underscores_action"), "headers_with_underscores_action"); ok {
					m.underscores = written(t)
				}
				for _, h := range f.items(f.field(hcm, "http_filters"), "http_filters") {
					name, _ := f.text(f.field(h, "name"), "http_filters.name")
					m.cors = m.cors || name.Value == "envoy.filters.http.cors" || strings.HasSuffix(dumpType(f.reader, f.field(h, "typed_config")), ".cors.v3.Cors")
				}
				if rc := f.visit(f.field(hcm, "route_config")); rc != nil && !isNull(rc) {
					cfg.inline = append(cfg.inline, envoyRoutes{rc, m})
					if n, ok := f.text(f.field(rc, "name"), "route_config.name"); ok && cfg.managers[n.Value] == nil {
						cfg.managers[n.Value] = m
					}
				}
				if n, ok := f.text(f.path(hcm, "rds", "route_config_name"), "rds.route_config_name"); ok && cfg.managers[n.Value] == nil {
					cfg.managers[n.Value] = m
				}
			}
		}
	}
}

// envoyPolicy is a RetryPolicy as written.
type envoyPolicy struct {
	at                          Pos
	retryOn, numRetries, perTry *setting
	codes                       []*setting
	gates                       []Gate
}

// envoyRouteConfig reads a RouteConfiguration: each virtual host is a
// resource named by the configuration, its name in the namespace's
// place. Envoy picks one virtual host by the request's Host and then its
// first route that matches, so the virtual hosts are alternatives as a
// namespace's resources are, and an as_built entry's namespace picks
// one. m is the connection manager that serves it, nil when none is
// read (a RouteConfiguration document alone: then Envoy's defaults, and
// its CORS policies are taken to apply); clusters give the backends (nil:
// each cluster by its name).
func (f *fileRead) envoyRouteConfig(rc *yaml.Node, m *envoyManager, clusters map[string]string) {
	name, _ := f.text(f.field(rc, "name"), "route_config.name")
	if name.At.Line == 0 {
		name.At = f.pos(f.visit(rc))
	}
	if m == nil {
		m = &envoyManager{cors: true}
	}
	underscores := m.underscores
	if underscores == nil {
		underscores = defaulted(envoyUnderscores, f.pos(f.visit(rc)))
	}
	var drops *Origin
	switch underscores.Value {
	case "ALLOW":
	case "DROP_HEADER", "REJECT_REQUEST":
		drops = &underscores.From
	default:
		f.problems = append(f.problems, Problem{At: underscores.From.At, Message: "headers_with_underscores_action is " + underscores.Value + ", not ALLOW, DROP_HEADER or REJECT_REQUEST"})
	}
	configPrint := fingerprint(rc)
	configRemoves := f.envoyRemoves(rc)
	for _, vh := range f.items(f.field(rc, "virtual_hosts"), "virtual_hosts") {
		vhName, _ := f.text(f.field(vh, "name"), "virtual_hosts.name")
		// Copies of one virtual host are one resource (the same bootstrap
		// read twice); the route configuration they are in tells them apart.
		res := &Resource{Platform: Envoy, Kind: envoyKind, Name: name, Namespace: vhName.Value, At: f.pos(f.visit(vh)), Traffic: AnyTraffic, fingerprint: configPrint}
		res.Hosts = f.texts(f.field(vh, "domains"), "virtual_hosts.domains")
		f.resources = append(f.resources, res)
		hostRetry := f.envoyRetryPolicy(f.field(vh, "retry_policy"))
		hostRemoves := append(configRemoves[:len(configRemoves):len(configRemoves)], f.envoyRemoves(vh)...)
		hostCORS := f.envoyCORS(vh)
		for _, r := range f.items(f.field(vh, "routes"), "virtual_hosts.routes") {
			rt := &Route{Resource: res, At: f.pos(r), DropsUnderscores: drops}
			rt.Matches = []Match{f.envoyMatch(f.field(r, "match"), rt.At)}
			action := f.field(r, "route")
			if c, ok := f.text(f.field(action, "cluster"), "route.cluster"); ok {
				rt.Backends = append(rt.Backends, envoyBackend(c, clusters))
			}
			for _, w := range f.items(f.path(action, "weighted_clusters", "clusters"), "weighted_clusters.clusters") {
				if c, ok := f.text(f.field(w, "name"), "weighted_clusters.clusters.name"); ok {
					rt.Backends = append(rt.Backends, envoyBackend(c, clusters))
				}
			}
			policy := hostRetry
			if p := f.visit(f.field(action, "retry_policy")); p != nil && !isNull(p) {
				policy = f.envoyRetryPolicy(p) // the route's replaces the virtual host's
			}
			var problems []Problem
			rt.Retry, problems = envoyRouteRetry(policy, rt.At)
			f.problems = append(f.problems, problems...)
			if t, ok := f.duration(f.field(action, "timeout"), "route.timeout"); ok {
				rt.Timeout, rt.TimeoutFrom = t.d, Origin{At: t.At}
			}
			rt.Removed = append(hostRemoves[:len(hostRemoves):len(hostRemoves)], f.envoyRemoves(r)...)
			rt.CORS = hostCORS
			if c := f.envoyCORS(action); c != nil {
				rt.CORS = c
			}
			if c := f.envoyCORS(r); c != nil {
				rt.CORS = c
			}
			if !m.cors {
				rt.CORS = nil // the preflight goes to the upstream
			}
			res.Routes = append(res.Routes, rt)
		}
		res.rank(pathmatch.Listed)
	}
}

// envoyBackend is the backend of the cluster c: its first endpoint's
// host name's first label, the host of an Istio "outbound|PORT|SUBSET|HOST"
// name, else the cluster's name.
func envoyBackend(c Text, clusters map[string]string) Text {
	if label, ok := clusters[c.Value]; ok {
		return Text{Value: label, At: c.At}
	}
	if parts := strings.Split(c.Value, "|"); len(parts) == 4 && parts[3] != "" {
		label, _, _ := strings.Cut(parts[3], ".")
		return Text{Value: label, At: c.At}
	}
	return c
}

// envoyRemoves reads request_headers_to_remove of a route configuration,
// a virtual host or a route.
func (f *fileRead) envoyRemoves(n *yaml.Node) []Header {
	var out []Header
	for _, t := range f.texts(f.field(n, "request_headers_to_remove"), "request_headers_to_remove") {
		out = append(out, Header{Name: t.Value, At: t.At, Field: "request_headers_to_remove"})
	}
	return out
}

// envoyMatch reads a RouteMatch. A header condition other than on
// ":method", and any other condition but the path, holds for some
// requests only.
func (f *fileRead) envoyMatch(m *yaml.Node, at Pos) Match {
	match := Match{At: at, Partial: f.partial(m, "prefix", "path", "path_separated_prefix", "safe_regex", "headers", "case_sensitive")}
	if m = f.visit(m); m == nil {
		return match
	}
	match.At = f.pos(m)
	for _, k := range []struct {
		field string
		kind  pathmatch.Kind
	}{{"prefix", pathmatch.Prefix}, {"path", pathmatch.Exact}, {"path_separated_prefix", pathmatch.SegmentPrefix}} {
		if t, ok := f.text(f.field(m, k.field), "match."+k.field); ok {
			match.Path = f.matcher(k.kind, t, "match."+k.field)
		}
	}
	if t, ok := f.text(f.path(m, "safe_regex", "regex"), "match.safe_regex.regex"); ok {
		match.Path = f.matcher(pathmatch.Regex, t, "match.safe_regex")
	}
	for _, h := range f.items(f.field(m, "headers"), "match.headers") {
		name, _ := f.text(f.field(h, "name"), "match.headers.name")
		var method *pathmatch.Matcher
		if name.Value == ":method" && match.Method == nil {
			method = f.envoyMethod(h)
		}
		if method == nil {
			if match.Partial == "" {
				match.Partial = "headers"
			}
			continue
		}
		match.Method = method
	}
	return match
}

// envoyMethod reads a HeaderMatcher on ":method" as a method matcher:
// an exact value or a regular expression, not inverted; nil otherwise.
func (f *fileRead) envoyMethod(h *yaml.Node) *pathmatch.Matcher {
	if inverted, _, _ := f.boolean(f.field(h, "invert_match"), "invert_match"); inverted {
		return nil
	}
	exact, ok := f.text(f.field(h, "exact_match"), "exact_match")
	if !ok {
		exact, ok = f.text(f.path(h, "string_match", "exact"), "string_match.exact")
	}
	if ok {
		exact.Value = strings.ToUpper(exact.Value)
		return f.matcher(pathmatch.Exact, exact, "the :method match")
	}
	re, ok := f.text(f.path(h, "safe_regex_match", "regex"), "safe_regex_match.regex")
	if !ok {
		re, ok = f.text(f.path(h, "string_match", "safe_regex", "regex"), "string_match.safe_regex.regex")
	}
	if ok {
		return f.matcher(pathmatch.Regex, re, "the :method match")
	}
	return nil
}

// envoyRetryPolicy reads a RetryPolicy; nil when not written.
func (f *fileRead) envoyRetryPolicy(n *yaml.Node) *envoyPolicy {
	n = f.visit(n)
	if n == nil || isNull(n) {
		return nil
	}
	p := &envoyPolicy{at: f.pos(n)}
	for _, k := range []struct {
		field string
		into  **setting
	}{{"retry_on", &p.retryOn}, {"num_retries", &p.numRetries}, {"per_try_timeout", &p.perTry}} {
		if t, ok := f.text(f.field(n, k.field), "retry_policy."+k.field); ok {
			*k.into = written(t)
		}
	}
	for _, c := range f.texts(f.field(n, "retriable_status_codes"), "retry_policy.retriable_status_codes") {
		if code, err := strconv.Atoi(strings.TrimSpace(c.Value)); err == nil && code >= 100 && code <= 599 {
			p.codes = append(p.codes, written(c))
		} else {
			f.problems = append(f.problems, Problem{At: c.At, Message: "retry_policy.retriable_status_codes entry " + c.Value + " is not a status code"})
		}
	}
	for _, h := range f.items(f.field(n, "retriable_request_headers"), "retry_policy.retriable_request_headers") {
		g := Gate{At: f.pos(h)}
		name, _ := f.text(f.field(h, "name"), "retriable_request_headers.name")
		inverted, _, _ := f.boolean(f.field(h, "invert_match"), "invert_match")
		missing, _, _ := f.boolean(f.field(h, "treat_missing_header_as_empty"), "treat_missing_header_as_empty")
		present, _, presentWritten := f.boolean(f.field(h, "present_match"), "present_match")
		switch {
		case inverted || missing || presentWritten && !present:
			// Met by requests without the header too.
		case name.Value == ":method":
			if g.Method = f.envoyMethod(h); g.Method == nil {
				g.Header = name.Value // every request has a method
			}
		default:
			g.Header = name.Value
		}
		p.gates = append(p.gates, g)
	}
	return p
}

// envoyCORS reads the CORS policy of a virtual host, a route or a route
// action: "cors", or the CORS filter's typed_per_filter_config entry;
// nil when none.
func (f *fileRead) envoyCORS(n *yaml.Node) *CORS {
	c := f.visit(f.field(n, "cors"))
	if c == nil || isNull(c) {
		c = f.visit(f.path(n, "typed_per_filter_config", "envoy.filters.http.cors"))
		if inner := f.visit(f.field(c, "config")); inner != nil && strings.HasSuffix(dumpType(f.reader, c), ".FilterConfig") {
			c = inner
		}
	}
	if c == nil || isNull(c) {
		return nil
	}
	cors := &CORS{At: f.pos(c)}
	if t, ok := f.text(f.field(c, "allow_headers"), "cors.allow_headers"); ok {
		cors.AllowHeaders, cors.AllowHeadersFrom = splitList(t), Origin{At: t.At}
	} else {
		cors.AllowHeadersFrom = defaulted(envoyCORSAllowHeaders, cors.At).From
	}
	if v, at, ok := f.boolean(f.field(c, "allow_credentials"), "cors.allow_credentials"); ok {
		cors.Credentials, cors.CredentialsFrom = v, Origin{At: at}
	}
	return cors
}
