package asbuilt

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// addReaderManifests seeds f with the manifests of the readers' test
// archives (testdata/*.txtar), not their expectations.
func addReaderManifests(f *testing.F) {
	addArchiveFiles(f, func(name string) bool { return name != "want" && name != "select" })
}

// addBenchManifests seeds f with the rendered manifests the cost
// benchmarks read.
func addBenchManifests(f *testing.F) {
	for i := range 2 * len(routes) {
		f.Add([]byte(benchManifest(i)))
	}
}

// addArchiveFiles seeds f with the files of the readers' test archives
// whose names keep accepts.
func addArchiveFiles(f *testing.F, keep func(name string) bool) {
	archives, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range archives {
		a, err := txtar.ParseFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range a.Files {
			if keep(file.Name) {
				f.Add(file.Data)
			}
		}
	}
}

// FuzzParse holds the readers to a model or an error, never a panic or
// unbounded work, on any bytes, and every place they report to a place
// in the file.
func FuzzParse(f *testing.F) {
	addReaderManifests(f)
	f.Add([]byte(aliasSquare(40)))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("kind: List\napiVersion: v1\nitems: [{kind: List, apiVersion: v1, items: []}]\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio}\ndata: {mesh: \"defaultHttpRetryPolicy: {attempts: 9}\"}\n"))
	f.Add([]byte("apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: internal}\nspec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw}\nspec: {gatewayClassName: internal}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n  parentRefs: [{name: gw}, {kind: Service, name: orders}]\n  rules: [{retry: {codes: [503]}, backendRefs: [{name: orders}]}]\n"))
	f.Add([]byte("kind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n  labels: {app: \"{{ .Chart.Name }}\"}\n  data: |\n    {{ inside }}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Parse("f.yaml", data)
		// Who implements each route, under every setting a run may give.
		s.Implement(Platforms{Mesh: IstioMesh, Classes: map[string]ImplementationName{"internal": KongImplementation}})
		check := func(what string, p Pos) {
			if p.File != "f.yaml" || p.Line < 1 || p.Column < 1 {
				t.Fatalf("%s at %+v", what, p)
			}
		}
		for _, p := range s.Problems {
			check("problem "+p.Message, p.At)
		}
		for _, e := range s.Errors {
			if e.At.File != "f.yaml" {
				t.Fatalf("error at %+v", e.At)
			}
		}
		for _, res := range s.Resources {
			check("resource", res.At)
			for _, rt := range res.Routes {
				check("route", rt.At)
				for _, m := range rt.Matches {
					check("match", m.At)
				}
				for _, h := range rt.Removed {
					check("removed header", h.At)
				}
				res.Select("POST", "/orders/{id}", AnyTraffic)
			}
		}
	})
}
