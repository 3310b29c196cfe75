package asbuilt

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

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
// some of them name the kinds that are read; benchManifest puts a large
// CustomResourceDefinition before every other one.
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

// benchManifest is the i-th manifest of writeManifests: every other one
// begins with the CustomResourceDefinition its chart installs.
func benchManifest(i int) string {
	m := fmt.Sprintf(manifest, i, i%20, fmt.Sprintf(companions[i%len(companions)], i, i%20), fmt.Sprintf(routes[i%len(routes)], i, i%20))
	if i%2 == 1 {
		m = fmt.Sprintf(crd, i) + "---\n" + m
	}
	return m
}

// crd is a chart's CustomResourceDefinition as Helm renders its crds/
// (controller-gen's shape): 40 fields of 7 lines, about 330 lines and
// 14 KB, a large document of a kind no reader reads.
var crd = func() string {
	var b strings.Builder
	b.WriteString(`# Source: svc%[1]d/crds/backups.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: backups.svc%[1]d.example.com
  annotations:
    controller-gen.kubebuilder.io/version: v0.16.1
spec:
  group: svc%[1]d.example.com
  names:
    kind: Backup
    listKind: BackupList
    plural: backups
    singular: backup
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        description: Backup is the Schema for the backups API.
        type: object
        properties:
          apiVersion:
            description: APIVersion defines the versioned schema of this representation of an object.
            type: string
          kind:
            description: Kind is a string value representing the REST resource this object represents.
            type: string
          spec:
            description: BackupSpec defines the desired state of a Backup.
            type: object
            properties:
`)
	for f := range 40 {
		fmt.Fprintf(&b, `              field%[1]d:
                description: |-
                  Field%[1]d says how the controller retries the backup's
                  step %[1]d; when unset, the controller's default applies.
                type: string
                maxLength: 253
                pattern: ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
`, f)
	}
	return b.String()
}()

// writeManifests writes 1,000 manifests holding 5,500 resources, 1,000
// of them routing resources and 500 CustomResourceDefinitions, the
// as-built side of a platform team's repository, and returns their paths
// and total size.
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
		if read, skipped := s.Counts(); read != 1000 || skipped != 4500 || len(s.Errors)+len(s.Problems) > 0 {
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
// on most edges of the corpus, the worst case for the rules.
// "+nginx+haproxy" and "+kong+envoy" read the proxies' own files instead
// (writeProxyConfigs, writeDeclarative). Compare the sub-benchmarks'
// cpu-ns/op; on a loaded machine, BenchmarkAsBuiltOverCheck.
func BenchmarkAsBuiltCost(b *testing.B) {
	dir, variants := costVariants(b)
	b.Run("floor", func(b *testing.B) {
		defer corpus.ReportCPU(b)()
		for b.Loop() {
			if _, _, err := corpus.Floor(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			defer corpus.ReportCPU(b)()
			for b.Loop() {
				b.ReportMetric(float64(checkWith(b, dir, v.asBuilt)), "findings")
			}
		})
	}
}

// BenchmarkAsBuiltOverCheck runs the variants of BenchmarkAsBuiltCost
// in turn within each iteration (the order rotating), so that the load of
// a busy machine, which changes by the second, weighs on all alike, and
// reports each variant's CPU time over the check's alone: the median over
// iterations (x-check-cpu; x-check-wall for wall time). Each run starts
// from a collected heap, as a process does, not paying for the garbage
// of the run before it.
func BenchmarkAsBuiltOverCheck(b *testing.B) {
	dir, variants := costVariants(b)
	checkWith(b, dir, nil) // what a first run alone pays
	cpuRatios := make([][]float64, len(variants))
	wallRatios := make([][]float64, len(variants))
	round := 0
	for b.Loop() {
		cpu := make([]time.Duration, len(variants))
		wall := make([]time.Duration, len(variants))
		for k := range variants {
			i := (k + round) % len(variants)
			runtime.GC()
			startCPU, ok := corpus.ProcessCPU()
			if !ok {
				b.Skip("the process's CPU time is not measured here")
			}
			start := time.Now()
			checkWith(b, dir, variants[i].asBuilt)
			wall[i] = time.Since(start)
			endCPU, _ := corpus.ProcessCPU()
			cpu[i] = endCPU - startCPU
		}
		round++
		for i := range variants {
			cpuRatios[i] = append(cpuRatios[i], float64(cpu[i])/float64(cpu[0]))
			wallRatios[i] = append(wallRatios[i], float64(wall[i])/float64(wall[0]))
		}
	}
	median := func(xs []float64) float64 {
		slices.Sort(xs)
		if n := len(xs); n%2 == 0 {
			return (xs[n/2-1] + xs[n/2]) / 2
		}
		return xs[len(xs)/2]
	}
	for i, v := range variants[1:] {
		b.ReportMetric(median(cpuRatios[i+1]), v.name+"-x-check-cpu")
		b.ReportMetric(median(wallRatios[i+1]), v.name+"-x-check-wall")
	}
}

// costVariant is a check with as-built configuration (none for the
// check alone).
type costVariant struct {
	name    string
	asBuilt *Source
}

// costVariants returns the corpus IDEMLINT_BENCH_CORPUS names and the
// checks BenchmarkAsBuiltCost compares, the check alone first.
func costVariants(b *testing.B) (string, []costVariant) {
	dir := os.Getenv("IDEMLINT_BENCH_CORPUS")
	if dir == "" {
		b.Skip("IDEMLINT_BENCH_CORPUS names no corpus (go run ./fixtures/gen -flows 2500 -out DIR)")
	}
	paths, _ := writeManifests(b)
	// Given as a platform team gives them: their directory.
	manifests := filepath.Dir(paths[0])
	declared, _ := writeDeclarative(b)
	return dir, []costVariant{
		{"check", nil},
		{"check+as-built", &Source{Paths: []string{manifests}, Mesh: NoMesh}},
		{"check+as-built+istio", &Source{Paths: []string{manifests}, Mesh: IstioMesh}},
		{"check+nginx+haproxy", &Source{Paths: []string{writeProxyConfigs(b)}, Mesh: NoMesh}},
		{"check+kong+envoy", &Source{Paths: []string{filepath.Dir(declared[0])}, Mesh: NoMesh}},
	}
}

// checkWith checks dir as idemlint does, with the as-built configuration
// asBuilt names (none when nil), and returns the findings.
func checkWith(b *testing.B, dir string, asBuilt *Source) int {
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
	return len(res.Findings)
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

// declarative are files of one service each, for proxies configured
// outside Kubernetes (a Kong configuration as decK dumps it, an Envoy
// bootstrap) and for Envoy Gateway (an HTTPRoute and the
// BackendTrafficPolicy that retries it), with the resources each holds.
var declarativeResources = []int{1, 1, 2}

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
`, `# Source: svc%[1]d/templates/httproute.yaml
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: svc%[1]d
  namespace: team%[2]d
spec:
  parentRefs:
  - name: public
    namespace: gateways
  rules:
  - matches:
    - path:
        type: PathPrefix
        value: /api/svc%[1]d
    backendRefs:
    - name: svc%[1]d
      port: 80
---
# Source: svc%[1]d/templates/backendtrafficpolicy.yaml
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: svc%[1]d
  namespace: team%[2]d
spec:
  targetRefs:
  - group: gateway.networking.k8s.io
    kind: HTTPRoute
    name: svc%[1]d
  retry:
    numRetries: 2
    retryOn:
      triggers: [connect-failure, retriable-status-codes]
      httpStatusCodes: [503]
    perRetry:
      timeout: 2s
`}

// writeDeclarative writes 1,000 files of declarative in turn into a
// directory, and returns their paths and total size.
func writeDeclarative(b *testing.B) (paths []string, size int64) {
	dir := b.TempDir()
	for i := range 1000 {
		p := filepath.Join(dir, fmt.Sprintf("svc%04d.yaml", i))
		data := fmt.Sprintf(declarative[i%len(declarative)], i, i%20)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
		size += int64(len(data))
	}
	return paths, size
}

// BenchmarkReadDeclarative1000 reads the 1,000 Kong, Envoy and Envoy
// Gateway files of writeDeclarative: compare with BenchmarkRead1000, the
// Kubernetes side.
func BenchmarkReadDeclarative1000(b *testing.B) {
	paths, size := writeDeclarative(b)
	resources := 0
	for i := range paths {
		resources += declarativeResources[i%len(declarative)]
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		s := Read(paths)
		if read, _ := s.Counts(); read != resources || len(s.Errors)+len(s.Problems) > 0 {
			b.Fatalf("read %d, errors %v, problems %v", read, s.Errors, s.Problems)
		}
	}
}
