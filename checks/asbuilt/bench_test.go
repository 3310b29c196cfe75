package asbuilt

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/idemlint/idemlint/checks"

	"github.com/idemlint/idemlint/fixtures/corpus"
	"github.com/idemlint/idemlint/schemas"
)

// manifest is one file of a platform team's repository, rendered as Helm
// renders a chart (block style, a "# Source:" comment before each
// document): a Deployment with the mesh's sidecar annotation, its Service
// and ConfigMap, a HorizontalPodAutoscaler or (every other file) a
// NetworkPolicy, whose policyTypes name Ingress, and one routing resource
// (routes, below, in turn, written in flow style as hand-written ones
// often are). Four of five documents are of kinds no reader reads, and
// some of them name the kinds that are read.
const manifest = `# Source: svc%[1]d/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc%[1]d
  namespace: team%[2]d
  labels:
    app: svc%[1]d
    app.kubernetes.io/managed-by: Helm
spec:
  replicas: 3
  selector:
    matchLabels:
      app: svc%[1]d
  template:
    metadata:
      labels:
        app: svc%[1]d
      annotations:
        sidecar.istio.io/inject: "true"
    spec:
      containers:
      - name: app
        image: registry.example.com/svc%[1]d:1.0.%[1]d
        ports:
        - containerPort: 8080
        envFrom:
        - configMapRef:
            name: svc%[1]d
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
---
# Source: svc%[1]d/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: svc%[1]d
  namespace: team%[2]d
spec:
  selector:
    app: svc%[1]d
  ports:
  - port: 80
    targetPort: 8080
---
# Source: svc%[1]d/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: svc%[1]d
  namespace: team%[2]d
data:
  LOG_LEVEL: info
  UPSTREAM: "http://svc%[1]d-db:5432"
---
%[3]s---
%[4]s`

// companions are the fourth document of a manifest, in turn.
var companions = []string{`# Source: svc%[1]d/templates/hpa.yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: svc%[1]d
  namespace: team%[2]d
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: svc%[1]d
  minReplicas: 3
  maxReplicas: 10
`, `# Source: svc%[1]d/templates/networkpolicy.yaml
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: svc%[1]d
  namespace: team%[2]d
spec:
  podSelector:
    matchLabels:
      app: svc%[1]d
  policyTypes:
  - Ingress
  ingress:
  - from:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: istio-system
`}

var routes = []string{`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: svc%[1]d, namespace: team%[2]d}
spec:
  hosts: [svc%[1]d]
  http:
  - match: [{uri: {prefix: /api/svc%[1]d}, method: {exact: POST}}]
    route: [{destination: {host: svc%[1]d.team%[2]d.svc.cluster.local}}]
    retries: {attempts: 2, retryOn: "connect-failure,503", perTryTimeout: 2s}
    headers: {request: {remove: [x-debug]}}
  - route: [{destination: {host: svc%[1]d}}]
`, `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: svc%[1]d, namespace: team%[2]d}
spec:
  rules:
  - matches: [{path: {type: PathPrefix, value: /api/svc%[1]d}}]
    backendRefs: [{name: svc%[1]d, port: 80}]
    retry: {codes: [503], attempts: 1}
`, `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: svc%[1]d
  namespace: team%[2]d
  annotations: {nginx.ingress.kubernetes.io/enable-cors: "true"}
spec:
  ingressClassName: nginx
  rules:
  - host: svc%[1]d.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: svc%[1]d, port: {number: 80}}}}
`}

// benchManifest is the i-th manifest of writeManifests.
func benchManifest(i int) string {
	return fmt.Sprintf(manifest, i, i%20, fmt.Sprintf(companions[i%len(companions)], i, i%20), fmt.Sprintf(routes[i%len(routes)], i, i%20))
}

// writeManifests writes 1,000 manifests holding 5,000 resources, 1,000
// of them routing resources, the as-built side of a platform team's
// repository, and returns their paths and total size.
func writeManifests(b *testing.B) (paths []string, size int64) {
	b.Helper()
	dir := b.TempDir()
	for i := range 1000 {
		p := filepath.Join(dir, fmt.Sprintf("svc%04d.yaml", i))
		data := benchManifest(i)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
		size += int64(len(data))
	}
	return paths, size
}

// BenchmarkRead1000 reads the 1,000 manifests of writeManifests.
func BenchmarkRead1000(b *testing.B) {
	paths, size := writeManifests(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		s := Read(paths)
		if read, skipped := s.Counts(); read != 1000 || skipped != 4000 || len(s.Errors)+len(s.Problems) > 0 {
			b.Fatalf("read %d, skipped %d, errors %v, problems %v", read, skipped, s.Errors, s.Problems)
		}
	}
}

// BenchmarkAsBuiltCost measures, in one run, what reading the 1,000
// manifests of writeManifests (--as-built naming their directory) and
// running the as-built rules add to a
// whole check of the corpus named by IDEMLINT_BENCH_CORPUS (go run
// ./fixtures/gen -flows 2500 -out DIR: 10,000 documents), beside the
// floor that check is held to (corpus.Floor). "+istio" adds the mesh,
// whose default retry then carries every hop no manifest binds: a finding
// on most edges of the corpus, the worst case for the rules. Compare the
// sub-benchmarks' cpu-ns/op.
func BenchmarkAsBuiltCost(b *testing.B) {
	dir := os.Getenv("IDEMLINT_BENCH_CORPUS")
	if dir == "" {
		b.Skip("IDEMLINT_BENCH_CORPUS names no corpus (go run ./fixtures/gen -flows 2500 -out DIR)")
	}
	paths, _ := writeManifests(b)
	// Given as a platform team gives them: their directory.
	manifests := filepath.Dir(paths[0])
	b.Run("floor", func(b *testing.B) {
		defer corpus.ReportCPU(b)()
		for b.Loop() {
			if _, _, err := corpus.Floor(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	check := func(b *testing.B, asBuilt *Source) {
		defer corpus.ReportCPU(b)()
		for b.Loop() {
			opts := checks.DefaultOptions()
			// The rules and the JSON Schema stage, as idemlint runs.
			opts.Rules = slices.Concat(checks.Core, Rules)
			opts.Schema = func() checks.SchemaStage { return schemas.NewValidator() }
			if asBuilt != nil {
				d, err := Open(*asBuilt, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				opts.Inputs = append(opts.Inputs, Config.Supply(d))
			}
			res, err := checks.CheckPaths([]string{dir}, opts)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(res.Findings)), "findings")
		}
	}
	b.Run("check", func(b *testing.B) { check(b, nil) })
	b.Run("check+as-built", func(b *testing.B) { check(b, &Source{Paths: []string{manifests}, Mesh: NoMesh}) })
	b.Run("check+as-built+istio", func(b *testing.B) { check(b, &Source{Paths: []string{manifests}, Mesh: IstioMesh}) })
	proxies := writeProxyConfigs(b)
	b.Run("check+nginx+haproxy", func(b *testing.B) { check(b, &Source{Paths: []string{proxies}, Mesh: NoMesh}) })
}

// writeProxyConfigs writes 1,000 proxy configuration files into a
// directory: an nginx.conf including conf.d/*.conf, 500 of those (a
// server of three locations, one an upstream of two servers), and 499
// haproxy.cfg files of a defaults section, a frontend and two backends.
func writeProxyConfigs(b *testing.B) string {
	dir := b.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("nginx.conf", "user nginx;\nworker_processes auto;\nevents { worker_connections 1024; }\nhttp {\n    proxy_set_header Host $host;\n    include conf.d/*.conf;\n}\n")
	for i := range 500 {
		write(fmt.Sprintf("conf.d/svc%d.conf", i), fmt.Sprintf(`upstream svc%[1]d {
    server svc%[1]d-a.team.svc:8080;
    server svc%[1]d-b.team.svc:8080;
}
server {
    listen 443 ssl;
    server_name svc%[1]d.example.com;
    location / { root /srv/www; }
    location /api/ {
        proxy_pass http://svc%[1]d;
        proxy_read_timeout 10s;
    }
    location ~* \.(png|css)$ { expires 1d; }
}
`, i))
	}
	for i := range 499 {
		write(fmt.Sprintf("haproxy/svc%d.cfg", i), fmt.Sprintf(`defaults
    mode http
    timeout connect 5s
    timeout server 10s
frontend fe%[1]d
    bind :8%[1]d
    default_backend svc%[1]d
backend svc%[1]d
    retry-on conn-failure empty-response
    http-request disable-l7-retry if METH_POST
    server s1 svc%[1]d.team.svc:8080 check
backend static%[1]d
    server s1 static.team.svc:80
`, i))
	}
	return dir
}

// BenchmarkReadProxies1000 reads the 1,000 files of writeProxyConfigs as
// --as-built naming their directory does.
func BenchmarkReadProxies1000(b *testing.B) {
	dir := writeProxyConfigs(b)
	defer corpus.ReportCPU(b)()
	for b.Loop() {
		d, _, err := Load(Source{Paths: []string{dir}, Mesh: NoMesh})
		if err != nil {
			b.Fatal(err)
		}
		if read, _ := d.Set.Counts(); read != 1498 || len(d.Set.Errors)+len(d.Set.Problems) > 0 {
			b.Fatalf("read %d, errors %v, problems %v", read, d.Set.Errors, d.Set.Problems)
		}
	}
}

// declarative are files of proxies configured outside Kubernetes, one
// service each: a Kong configuration as decK dumps it, an Envoy bootstrap.
var declarative = []string{`_format_version: "3.0"
plugins:
- config: {credentials: true, headers: [content-type, x-idempotency-key], origins: ["https://svc%[1]d.example.com"]}
  name: cors
services:
- connect_timeout: 60000
  enabled: true
  host: svc%[1]d.team%[2]d.svc.cluster.local
  name: svc%[1]d
  port: 8080
  protocol: http
  read_timeout: 60000
  retries: 2
  routes:
  - methods: [POST]
    name: svc%[1]d-create
    paths: [/api/svc%[1]d]
    strip_path: false
  - name: svc%[1]d-item
    paths: ["~/api/svc%[1]d/[^/]+$"]
  - name: svc%[1]d-all
    paths: [/]
  write_timeout: 60000
`, `static_resources:
  listeners:
  - name: ingress
    address: {socket_address: {address: 0.0.0.0, port_value: 8080}}
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          stat_prefix: ingress
          http_filters:
          - name: envoy.filters.http.router
            typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}
          route_config:
            name: svc%[1]d
            virtual_hosts:
            - name: svc%[1]d
              domains: ["*"]
              routes:
              - match: {prefix: /api/svc%[1]d, headers: [{name: ":method", string_match: {exact: POST}}]}
                route: {cluster: svc%[1]d, retry_policy: {retry_on: connect-failure, num_retries: 2}}
              - match: {safe_regex: {regex: "/api/svc%[1]d/[^/]+"}}
                route: {cluster: svc%[1]d, retry_policy: {retry_on: "5xx", per_try_timeout: 2s}}
              - match: {prefix: /}
                route: {cluster: svc%[1]d}
  clusters:
  - name: svc%[1]d
    type: STRICT_DNS
    load_assignment:
      cluster_name: svc%[1]d
      endpoints:
      - lb_endpoints:
        - endpoint: {address: {socket_address: {address: svc%[1]d.team%[2]d.svc.cluster.local, port_value: 8080}}}
`}

// BenchmarkReadDeclarative1000 reads 1,000 Kong and Envoy files, half
// each: compare with BenchmarkRead1000, the Kubernetes side.
func BenchmarkReadDeclarative1000(b *testing.B) {
	dir := b.TempDir()
	var paths []string
	var size int64
	for i := range 1000 {
		p := filepath.Join(dir, fmt.Sprintf("svc%04d.yaml", i))
		data := fmt.Sprintf(declarative[i%len(declarative)], i, i%20)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
		size += int64(len(data))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		s := Read(paths)
		if read, _ := s.Counts(); read != 1000 || len(s.Errors)+len(s.Problems) > 0 {
			b.Fatalf("read %d, errors %v, problems %v", read, s.Errors, s.Problems)
		}
	}
}
