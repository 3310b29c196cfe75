// Package asbuilt reads the proxy and mesh configuration that actually
// carries each hop of a boundary set (docs/as-built.md) into a small model
// free of any platform: which resource routes which requests to which
// backend, what it retries, which request headers it drops, and what its
// CORS answer allows.
//
// # Reading (8.1)
//
// Read takes infrastructure files (YAML, several documents per file, or
// JSON, or a platform's own language: NGINX, HAProxy; IsFile says which
// files of a walked directory to take) and
// returns a Set. Every value keeps its file, line and column. The kinds
// read, one file each:
//
//   - istio.go: VirtualService (networking.istio.io/*), and the ConfigMap
//     "istio" whose data.mesh holds defaultHttpRetryPolicy;
//   - gatewayapi.go: HTTPRoute, Gateway and GatewayClass
//     (gateway.networking.k8s.io/*); implementation.go finds who
//     implements each HTTPRoute (Istio, Envoy Gateway, Kong, or none
//     known) from its parents and decides its retry with and without a
//     retry stanza (Set.Implement, with the run's mesh and classes);
//   - nginx.go: Ingress, and the ingress-nginx controller ConfigMap;
//   - apigateway.go: an AWS API Gateway OpenAPI export;
//   - nginxconf.go: an nginx.conf and the files it includes
//     (nginxconf_parse.go reads the language and follows the includes);
//   - kong.go: a Kong declarative configuration (_format_version), one
//     KongService resource a service; and a Service holding the
//     konghq.com/retries annotation, which an HTTPRoute under Kong that
//     sends to it retries by (one without is skipped unparsed);
//   - envoy.go: an Envoy bootstrap, RouteConfiguration or admin
//     config_dump, one EnvoyRouteConfiguration resource a virtual host;
//   - envoygateway.go: Envoy Gateway's BackendTrafficPolicy,
//     ClientTrafficPolicy and SecurityPolicy, applied to the HTTPRoutes
//     Envoy Gateway carries (implementation.go);
//   - haproxy.go: a haproxy.cfg.
//
// A kubectl "List" is read item by item; any other kind is counted in
// Set.Skipped (a document of a kind idemlint does not read is skipped
// without being parsed, triage.go: most of a repository's manifests are
// Deployments and Services; Set.SkippedKinds counts them by kind). A file
// holding Go template actions outside YAML strings (template.go) is one
// Set.Errors entry that says to render it first. Resources of one kind,
// namespace and name are one resource: a copy that differs is a problem
// at it, and the first in path order is used (a cluster configuration's
// copies alike); a missing namespace is "default". A file that cannot be read or parsed is a Set.Errors entry
// (IDL001 at that file) and nothing of it is used; a value written but
// not understood is a Set.Problems entry, IDL001 at its place
// (Set.FileFindings reports both). Reading is bounded
// whatever the input: MaxFileSize, a nesting limit, and a budget of node
// visits proportional to the file's size that YAML aliases cannot
// escape. Load (load.go) reads what a Source names, from the flags of
// "check" or from .idemlint.json's "as_built" alike; Open (open.go)
// reads it while a run reads its boundary documents.
//
// # Model
//
// A Resource (kind, name, namespace, position) has Routes in the order
// written, and the Traffic they apply to: an Istio VirtualService's
// gateways (none or "mesh": the calls between services; a Gateway: the
// traffic entering through it, the browser's included), an HTTPRoute's
// parents. A route binds only to a hop whose traffic it applies to, and
// several resources bound to one hop are alternatives. A Route has Matches (pathmatch matchers, a method; Partial
// when it also asks for a header or query parameter), the
// Backends it sends to, its effective Retry, the headers it Removed or
// Set, the only headers it Forwards (if it forwards only some), whether
// it DropsUnderscores, and its CORS. Each value that a default can
// provide carries an Origin: where it is written, or which Default of
// the table in defaults.go applies (docs/as-built.md, Defaults are
// configuration), so that a finding can say
// "Istio retries twice by default" and cite where that comes from.
//
// Retries are counted and classified in one place, retry.go (8.3):
// Retry.Attempts are in all, the first included; Conditions are on the
// retry_on vocabulary (connect_error, timeout, status codes), and
// Retry.ResendsAfterReceipt says whether the upstream may already have
// acted on a resent request. ingress-nginx treats POST, LOCK and PATCH
// apart, and an Envoy retry may be limited to some methods or to
// requests holding a header (Retry.OnlyIf): Route.RetryFor(method) picks
// the right one.
//
// # Binding (8.4)
//
// bind.go binds a boundary edge to what realises it, from what the checks
// know of the edge (input.go passes an edge document's "to" and its
// as_built member): Set.Bind(to, asBuilt) takes the resources its
// as_built entries name (Binding.Unmatched: entries naming nothing), else
// those with a route to the backend named as the edge's "to"
// (Binding.Ambiguous: found in several namespaces, so none is bound).
// Binding.Hops(method, path) is then the as-built hop of an operation
// through each bound resource: the route the platform itself picks
// (Resource.Select, by the platform's precedence), its RetryFor the
// method, and through the route Drops(header) and CORS.
// Binding.Strays are the routes written for a write the hop does not
// declare. A hop no resource binds, under mesh: istio, gets
// Set.IstioDefaultRetry. Deployment.HopNote (graph.go) words a hop as
// built for "idemlint graph".
//
// # Rules (8.5)
//
// The rules live here, one file each, listed in Rules for the checks
// framework; the core checks package never imports this one. They read
// the configuration the caller supplies (Config.Supply: "check
// --as-built") and the hops of each edge operation (input.go). IDL401 to
// IDL407 are written; a finding is placed at the
// as-built value (a Text's or an Origin's At), names a Default and its
// Source when one caused it, and relates the edge's operation. IDL407
// judges the binding itself: as_built entries that name nothing,
// ambiguous implicit bindings, and Binding.Strays.
package asbuilt
