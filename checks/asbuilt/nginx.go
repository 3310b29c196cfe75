package asbuilt

import (
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/idemlint/idemlint/checks/pathmatch"
)

// ingress-nginx (docs/as-built.md, Reading the configuration): an Ingress's paths and annotations, and the
// controller ConfigMap. Names are those of the ingress-nginx annotations
// and ConfigMap documentation.

// IngressNginx is the platform's name in findings.
const IngressNginx Platform = "ingress-nginx"

// ingressNginx is the platform as platforms lists it.
var ingressNginx = &platform{
	name:  IngressNginx,
	kinds: []kindReader{{kind: "Ingress", groups: []string{"networking.k8s.io", "extensions"}, read: (*fileRead).ingress}},
	configMap: &configMapReader{
		word: "ingress-nginx",
		claims: func(_ *fileRead, _ *yaml.Node, name, label string) bool {
			return name == "ingress-nginx-controller" || label == "ingress-nginx"
		},
		read: (*fileRead).nginxConfigMap,
	},
	defaults: []*Default{nginxProxyNextUpstream, nginxProxyNextUpstreamTries, nginxRetryNonIdempotent, nginxCORSAllowHeaders, nginxCORSAllowCredentials, nginxUnderscoresInHeaders},
}

// The defaults it relies on.
var (
	nginxProxyNextUpstream = &Default{
		ID:      "ingress-nginx.proxy-next-upstream",
		Setting: "proxy-next-upstream",
		Value:   "error timeout",
		Source:  "ingress-nginx docs, user-guide/nginx-configuration/configmap.md#proxy-next-upstream",
		Live:    true, // nginx decides it: proven with the directives of the template
	}
	nginxProxyNextUpstreamTries = &Default{
		ID:      "ingress-nginx.proxy-next-upstream-tries",
		Setting: "proxy-next-upstream-tries",
		Value:   "3",
		Source:  "ingress-nginx docs, user-guide/nginx-configuration/configmap.md#proxy-next-upstream-tries",
		Live:    true, // nginx decides it: proven with the directives of the template
	}
	nginxRetryNonIdempotent = &Default{
		ID:      "ingress-nginx.retry-non-idempotent",
		Setting: "retry-non-idempotent",
		Value:   "false",
		Source:  "ingress-nginx docs, user-guide/nginx-configuration/configmap.md#retry-non-idempotent; nginx proxy_next_upstream non_idempotent: POST, LOCK and PATCH are not passed to the next server once sent",
		Live:    true, // nginx decides it: proven with the directives of the template
	}
	nginxCORSAllowHeaders = &Default{
		ID:      "ingress-nginx.cors-allow-headers",
		Setting: "nginx.ingress.kubernetes.io/cors-allow-headers",
		Value:   "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization",
		Source:  "ingress-nginx docs, user-guide/nginx-configuration/annotations.md#enable-cors",
	}
	nginxCORSAllowCredentials = &Default{
		ID:      "ingress-nginx.cors-allow-credentials",
		Setting: "nginx.ingress.kubernetes.io/cors-allow-credentials",
		Value:   "true",
		Source:  "ingress-nginx docs, user-guide/nginx-configuration/annotations.md#enable-cors",
	}
	nginxUnderscoresInHeaders = &Default{
		ID:      "ingress-nginx.enable-underscores-in-headers",
		Setting: "enable-underscores-in-headers",
		Value:   "false",
		Source:  "ingress-nginx docs, user-guide/nginx-configuration/configmap.md#enable-underscores-in-headers; nginx underscores_in_headers: such headers are dropped",
		Live:    true, // nginx decides it: proven with the directives of the template
	}
)

const annotationPrefix = "nginx.ingress.kubernetes.io/"

// nginxConfig is the controller ConfigMap read: the settings it writes,
// by key.
type nginxConfig struct {
	at       configID
	settings map[string]*setting
}

// controllerKeys are the ConfigMap keys idemlint reads.
var controllerKeys = []string{"proxy-next-upstream", "proxy-next-upstream-tries", "retry-non-idempotent", "enable-underscores-in-headers"}

func (f *fileRead) nginxConfigMap(root *yaml.Node) {
	cfg := &nginxConfig{at: f.config("ConfigMap", root), settings: map[string]*setting{}}
	data := f.field(root, "data")
	for _, key := range controllerKeys {
		if t, ok := f.text(f.field(data, key), "data."+key); ok {
			cfg.settings[key] = written(t)
		}
	}
	f.nginxes = append(f.nginxes, cfg)
}

func (s *Set) setNginx(c *nginxConfig) {
	if s.nginx != nil {
		s.once("ingress-nginx controller ConfigMap", s.nginx.at, c.at)
		return
	}
	s.nginx = c
}

// controller returns the ConfigMap's setting key, else the default d
// applying at at.
func (s *Set) controller(key string, d *Default, at Pos) *setting {
	if s.nginx != nil && s.nginx.settings[key] != nil {
		return s.nginx.settings[key]
	}
	return defaulted(d, at)
}

func (f *fileRead) ingress(root *yaml.Node) {
	annotations := f.path(root, "metadata", "annotations")
	class, _ := f.text(f.path(root, "spec", "ingressClassName"), "spec.ingressClassName")
	if class.Value == "" {
		class, _ = f.text(f.field(annotations, "kubernetes.io/ingress.class"), "the kubernetes.io/ingress.class annotation")
	}
	if class.Value != "" && !strings.Contains(class.Value, "nginx") {
		f.skip([]byte("Ingress of class " + class.Value)) // another controller's (an AWS ALB, GCE)
		return
	}
	res := f.resource(IngressNginx, "Ingress", root)
	annotation := func(name string) (Text, bool) {
		return f.text(f.field(annotations, annotationPrefix+name), "the "+annotationPrefix+name+" annotation")
	}
	var removed []Header
	if snippet := f.visit(f.field(annotations, annotationPrefix+"configuration-snippet")); snippet != nil {
		removed = f.snippetRemoves(snippet)
	}
	var next, tries *setting
	if t, ok := annotation("proxy-next-upstream"); ok {
		next = written(t)
	}
	if t, ok := annotation("proxy-next-upstream-tries"); ok {
		// ingress-nginx ignores an annotation it cannot parse: the
		// controller's setting applies.
		if n, err := strconv.Atoi(strings.TrimSpace(t.Value)); err != nil || n < 0 {
			f.problems = append(f.problems, Problem{At: t.At, Message: "the " + annotationPrefix + "proxy-next-upstream-tries annotation is " + strconv.Quote(t.Value) + ", not a whole number"})
		} else {
			tries = written(t)
		}
	}
	var cors *CORS
	if enabled, at, ok := f.boolean(f.field(annotations, annotationPrefix+"enable-cors"), "the "+annotationPrefix+"enable-cors annotation"); ok && enabled {
		cors = &CORS{At: at}
		if t, ok := annotation("cors-allow-headers"); ok {
			cors.AllowHeaders, cors.AllowHeadersFrom = splitList(t), Origin{At: t.At}
		} else {
			d := defaulted(nginxCORSAllowHeaders, at)
			cors.AllowHeaders, cors.AllowHeadersFrom = splitList(Text{Value: d.Value, At: at}), d.From
		}
		credentials := defaulted(nginxCORSAllowCredentials, at)
		if t, ok := annotation("cors-allow-credentials"); ok {
			credentials = written(t)
		}
		cors.Credentials, cors.CredentialsFrom = isTrue(credentials.Value), credentials.From
	}
	spec := f.field(root, "spec")
	for _, rule := range f.items(f.field(spec, "rules"), "spec.rules") {
		if host, ok := f.text(f.field(rule, "host"), "rules.host"); ok {
			res.Hosts = append(res.Hosts, host)
		}
		for _, p := range f.items(f.path(rule, "http", "paths"), "rules.http.paths") {
			rt := &Route{Resource: res, At: f.pos(p), Removed: removed, CORS: cors}
			kind := pathmatch.SegmentPrefix // Prefix, and ImplementationSpecific as ingress-nginx reads it
			if t, ok := f.text(f.field(p, "pathType"), "pathType"); ok && t.Value == "Exact" {
				kind = pathmatch.Exact
			}
			path := Text{Value: "/", At: rt.At}
			if t, ok := f.text(f.field(p, "path"), "path"); ok {
				path = t
			}
			rt.Matches = []Match{{Path: f.matcher(kind, path, "path"), At: path.At}}
			if name, ok := f.text(f.path(p, "backend", "service", "name"), "backend.service.name"); ok {
				rt.Backends = append(rt.Backends, name)
			}
			res.Routes = append(res.Routes, rt)
		}
	}
	if name, ok := f.text(f.path(spec, "defaultBackend", "service", "name"), "spec.defaultBackend.service.name"); ok {
		res.Routes = append(res.Routes, &Route{Resource: res, At: name.At, Backends: []Text{name}, Removed: removed, CORS: cors})
	}
	res.rank(pathmatch.Ingress)

	f.later(func() {
		s := f.set
		for _, rt := range res.Routes {
			at := rt.At
			next, tries := next, tries
			if next == nil {
				next = s.controller("proxy-next-upstream", nginxProxyNextUpstream, at)
			}
			if tries == nil {
				tries = s.controller("proxy-next-upstream-tries", nginxProxyNextUpstreamTries, at)
			}
			nonIdempotent := s.controller("retry-non-idempotent", nginxRetryNonIdempotent, at)
			var problems []Problem
			rt.Retry, problems = nginxRetry(next, tries, nonIdempotent, false)
			post, _ := nginxRetry(next, tries, nonIdempotent, true)
			rt.NonIdempotent = &post
			if underscores := s.controller("enable-underscores-in-headers", nginxUnderscoresInHeaders, at); !isTrue(underscores.Value) {
				rt.DropsUnderscores = &underscores.From
			}
			s.Problems = append(s.Problems, problems...)
		}
	})
}

// isTrue reads a boolean setting as ingress-nginx does (strconv's
// words); anything else is false.
func isTrue(s string) bool {
	v, _ := strconv.ParseBool(strings.TrimSpace(s))
	return v
}

// splitList splits a comma-separated header list written at t.
func splitList(t Text) []Text {
	var out []Text
	for name := range strings.SplitSeq(t.Value, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, Text{Value: name, At: t.At})
		}
	}
	return out
}

// emptyHeader is a proxy_set_header directive that sets a header to the
// empty string, which makes nginx not send it.
var emptyHeader = regexp.MustCompile(`proxy_set_header\s+([^\s;"']+)\s+(?:""|'')\s*;`)

// snippetRemoves reads a configuration-snippet for the headers it
// removes; only those directives are read.
func (f *fileRead) snippetRemoves(n *yaml.Node) []Header {
	t, ok := f.text(n, "the "+annotationPrefix+"configuration-snippet annotation")
	if !ok {
		return nil
	}
	shift := f.blockShift(n)
	var out []Header
	for i, line := range strings.Split(t.Value, "\n") {
		for _, m := range emptyHeader.FindAllStringSubmatchIndex(line, -1) {
			at := t.At
			if n.Style&yaml.LiteralStyle != 0 {
				at.Line, at.Column = shift(i+1, len([]rune(line[:m[0]]))+1)
			}
			out = append(out, Header{Name: line[m[2]:m[3]], At: at, Field: "configuration-snippet"})
		}
	}
	return out
}
