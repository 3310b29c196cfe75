package asbuilt

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v4"
	"go.yaml.in/yaml/v4/plugin/loaderlimits"

	"github.com/idemlint/idemlint/checks/pathmatch"
)

// Istio (docs/as-built.md, Reading the configuration): a VirtualService's hosts and http routes, and the
// mesh configuration's defaultHttpRetryPolicy. Field names are those of
// istio.io/api networking/v1 VirtualService and mesh/v1alpha1 MeshConfig.

// Istio is the platform's name in findings.
const Istio Platform = "istio"

// istio is the platform as platforms lists it.
var istio = &platform{
	name:  Istio,
	kinds: []kindReader{{kind: "VirtualService", groups: []string{"networking.istio.io"}, read: (*fileRead).virtualService}},
	configMap: &configMapReader{
		word: "istio",
		// "istio", or a revision's "istio-REVISION"
		claims: func(f *fileRead, root *yaml.Node, name, _ string) bool {
			return name == "istio" || strings.HasPrefix(name, "istio-") && f.path(root, "data", "mesh") != nil
		},
		read: (*fileRead).meshConfigMap,
	},
	defaults: []*Default{istioRetries, istioRetryOn, istioRetriableStatusCodes},
}

// The defaults it relies on.
var (
	istioRetries = &Default{
		ID:      "istio.retries",
		Setting: "VirtualService http[].retries.attempts (no retries written, no mesh defaultHttpRetryPolicy)",
		Value:   "2",
		Source:  "istio/istio pilot/pkg/networking/core/route/retry/retry.go, defaultPolicy: NumRetries 2",
	}
	istioRetryOn = &Default{
		ID:      "istio.retry-on",
		Setting: "VirtualService http[].retries.retryOn",
		Value:   "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
		Source:  "istio/istio pilot/pkg/networking/core/route/retry/retry.go, defaultPolicy: RetryOn",
	}
	istioRetriableStatusCodes = &Default{
		ID:      "istio.retriable-status-codes",
		Setting: "retriable status codes (no status code in retryOn)",
		Value:   "503",
		Source:  "istio/istio pilot/pkg/networking/core/route/retry/retry.go, defaultPolicy: RetriableStatusCodes [503]",
	}
)

// meshConfig is the Istio mesh ConfigMap read.
type meshConfig struct {
	at configID
	// retry is defaultHttpRetryPolicy, nil when not written: it replaces
	// the built-in policy for routes without retries.
	retry *istioRetry
}

// istioRetry is an HTTPRetry as written.
type istioRetry struct {
	attempts, retryOn, perTry *setting
}

func (f *fileRead) virtualService(root *yaml.Node) {
	res := f.resource(Istio, "VirtualService", root)
	spec := f.field(root, "spec")
	res.Hosts = f.texts(f.field(spec, "hosts"), "spec.hosts")
	res.Traffic = f.istioGateways(res, f.field(spec, "gateways"), "spec.gateways")
	for _, h := range f.items(f.field(spec, "http"), "spec.http") {
		rt := &Route{Resource: res, At: f.pos(h)}
		for _, m := range f.items(f.field(h, "match"), "match") {
			match := Match{At: f.pos(m), Partial: f.partial(m, "uri", "method", "name", "ignoreUriCase", "gateways")}
			if g := f.field(m, "gateways"); g != nil {
				match.Traffic = f.istioGateways(nil, g, "match.gateways")
			}
			if uri := f.field(m, "uri"); uri != nil {
				match.Path = f.istioStringMatch(uri, "match.uri")
			}
			if method := f.field(m, "method"); method != nil {
				match.Method = f.istioStringMatch(method, "match.method")
			}
			rt.Matches = append(rt.Matches, match)
		}
		for _, d := range f.items(f.field(h, "route"), "route") {
			if host, ok := f.text(f.path(d, "destination", "host"), "route.destination.host"); ok {
				label, _, _ := strings.Cut(host.Value, ".")
				rt.Backends = append(rt.Backends, Text{Value: label, At: host.At})
			}
			f.istioHeaders(rt, d) // a destination's own header operations
		}
		if t, ok := f.duration(f.field(h, "timeout"), "timeout"); ok {
			rt.Timeout, rt.TimeoutFrom = t.d, Origin{At: t.At}
		}
		f.istioHeaders(rt, h)
		if cors := f.visit(f.field(h, "corsPolicy")); cors != nil && !isNull(cors) {
			rt.CORS = f.corsList(cors, "allowHeaders", "allowCredentials")
		}
		written := f.istioRetry(f.field(h, "retries"))
		f.later(func() {
			retry := written
			if retry == nil && f.set.mesh != nil {
				retry = f.set.mesh.retry
			}
			var problems []Problem
			if retry == nil {
				rt.Retry, problems = envoyRetry(nil, nil, nil, rt.At)
			} else {
				rt.Retry, problems = envoyRetry(retry.attempts, retry.retryOn, retry.perTry, rt.At)
			}
			f.set.Problems = append(f.set.Problems, problems...)
		})
		res.Routes = append(res.Routes, rt)
	}
	res.rank(pathmatch.Listed)
}

// istioGateways reads a VirtualService's gateways (or a match's, which
// replace them for that match): absent or "mesh", the traffic between
// services through their sidecars; a Gateway's name, the traffic
// entering through it. The Gateways of the resource's own list are its
// Parents (res nil for a match's).
func (f *fileRead) istioGateways(res *Resource, n *yaml.Node, what string) Traffic {
	names := f.texts(n, what)
	if len(names) == 0 {
		return SidecarTraffic
	}
	var t Traffic
	for _, name := range names {
		if name.Value == "mesh" {
			t |= SidecarTraffic
			continue
		}
		t |= GatewayTraffic
		if res != nil {
			ns, gw, ok := strings.Cut(name.Value, "/")
			if !ok {
				ns, gw = res.Namespace, name.Value
			}
			res.Parents = append(res.Parents, Parent{Kind: "Gateway", Namespace: ns, Name: Text{Value: gw, At: name.At}})
		}
	}
	return t
}

// istioHeaders reads the request header operations of an http entry or
// of one of its destinations (Istio Headers: request.remove, request.set).
func (f *fileRead) istioHeaders(rt *Route, n *yaml.Node) {
	request := f.path(n, "headers", "request")
	for _, name := range f.texts(f.field(request, "remove"), "headers.request.remove") {
		rt.Removed = append(rt.Removed, Header{Name: name.Value, At: name.At, Field: "headers.request.remove"})
	}
	keys, _ := f.pairs(f.field(request, "set"), "headers.request.set")
	for _, k := range keys {
		rt.Set = append(rt.Set, Header{Name: k.Value, At: f.pos(k), Field: "headers.request.set"})
	}
}

// istioStringMatch reads an Istio StringMatch: exact, prefix (a string
// prefix) or regex (RE2, the whole value).
func (f *fileRead) istioStringMatch(n *yaml.Node, what string) *pathmatch.Matcher {
	for _, k := range []struct {
		field string
		kind  pathmatch.Kind
	}{{"exact", pathmatch.Exact}, {"prefix", pathmatch.Prefix}, {"regex", pathmatch.Regex}} {
		if t, ok := f.text(f.field(n, k.field), what+"."+k.field); ok {
			return f.matcher(k.kind, t, what)
		}
	}
	return nil
}

// istioRetry reads an HTTPRetry; nil when not written.
func (f *fileRead) istioRetry(n *yaml.Node) *istioRetry {
	n = f.visit(n)
	if n == nil || isNull(n) {
		return nil
	}
	out := &istioRetry{attempts: &setting{Value: "0", From: Origin{At: f.pos(n)}}}
	if t, ok := f.text(f.field(n, "attempts"), "retries.attempts"); ok {
		out.attempts = written(t)
	}
	if t, ok := f.text(f.field(n, "retryOn"), "retries.retryOn"); ok {
		out.retryOn = written(t)
	}
	if t, ok := f.text(f.field(n, "perTryTimeout"), "retries.perTryTimeout"); ok {
		out.perTry = written(t)
	}
	return out
}

// meshConfigMap reads the ConfigMap "istio": data.mesh is the mesh
// configuration, YAML inside a string of this file.
func (f *fileRead) meshConfigMap(root *yaml.Node) {
	mesh := &meshConfig{at: f.config("ConfigMap", root)}
	f.meshes = append(f.meshes, mesh)
	value := f.visit(f.path(root, "data", "mesh"))
	t, ok := f.text(value, "data.mesh")
	if !ok {
		return
	}
	var doc yaml.Node
	if err := yaml.Load([]byte(t.Value), &doc, yaml.WithPlugin(loaderlimits.New(loaderlimits.DepthValue(maxDepth)))); err != nil {
		f.problems = append(f.problems, Problem{At: t.At, Message: "data.mesh is not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")})
		return
	}
	f.shift = f.blockShift(value)
	defer func() { f.shift = nil }()
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		mesh.retry = f.istioRetry(f.field(doc.Content[0], "defaultHttpRetryPolicy"))
	}
}

// blockShift maps positions in the text of the scalar n into the file:
// a literal block ("|") keeps its lines, indented by the block's
// indentation; any other style puts everything at the value.
func (f *fileRead) blockShift(n *yaml.Node) func(line, col int) (int, int) {
	at := f.pos(n)
	if n.Style&yaml.LiteralStyle == 0 {
		return func(int, int) (int, int) { return at.Line, at.Column }
	}
	indent := leadingSpaces(f.data, at.Line+1)
	return func(line, col int) (int, int) { return at.Line + line, indent + col }
}

// leadingSpaces counts the spaces that start the given line (1-based).
func leadingSpaces(data []byte, line int) int {
	for i := 1; i < line; i++ {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return 0
		}
		data = data[nl+1:]
	}
	return len(data) - len(bytes.TrimLeft(data, " "))
}

func (s *Set) setMesh(m *meshConfig) {
	if s.mesh != nil {
		s.once("Istio mesh ConfigMap", s.mesh.at, m.at)
		return
	}
	s.mesh = m
}

// IstioDefaultRetry is the retry Istio applies to a request no
// VirtualService route configures (with mesh: istio): the
// mesh's defaultHttpRetryPolicy when one was read, else the built-in
// policy, its defaults attributed to at (the configuration that
// declares the mesh).
func (s *Set) IstioDefaultRetry(at Pos) Retry {
	var r Retry
	if s.mesh != nil && s.mesh.retry != nil {
		m := s.mesh.retry
		r, _ = envoyRetry(m.attempts, m.retryOn, m.perTry, at)
	} else {
		r, _ = envoyRetry(nil, nil, nil, at)
	}
	return r
}
