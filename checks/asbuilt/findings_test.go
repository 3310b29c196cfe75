package asbuilt

import (
	"fmt"
	"strings"
	"testing"
)

// TestFileFindings: every value written but not understood is an IDL001
// finding at its place (docs/rules.md, Rules are independent: nothing is
// skipped silently), as is
// a file that cannot be parsed; a file that parses yields nothing else.
func TestFileFindings(t *testing.T) {
	src := `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: !!binary b3JkZXJz
  namespace: shop
spec:
  hosts: orders
  http:
  - match: [{uri: {regex: "(unclosed"}}]
    route: [{destination: {host: orders}}]
    retries: {attempts: two, perTryTimeout: soon}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ingress-nginx-controller, namespace: ingress-nginx}
data: {proxy-next-upstream-tries: "3x"}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: orders, namespace: shop}
spec:
  rules:
  - http:
      paths:
      - {path: /orders, pathType: Prefix, backend: {service: {name: orders}}}
      - {path: /refunds, pathType: Prefix, backend: {service: {name: orders}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ingress-nginx-controller, namespace: ingress-nginx}
data: {proxy-next-upstream-tries: "5"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: istio, namespace: istio-system}
data:
  mesh: |
    defaultHttpRetryPolicy: [unclosed
`
	s := Parse("routes.yaml", []byte(src))
	s.Errors = append(s.Errors, Parse("broken.yaml", []byte("kind: HTTPRoute\nspec: [unclosed\n")).Errors...)
	var got []string
	for _, f := range s.FileFindings() {
		got = append(got, fmt.Sprintf("%s %s %s:%d:%d %s", f.Rule, f.Severity, f.File, f.Line, f.Column, f.Message))
	}
	want := []string{
		"IDL001 error broken.yaml:3:1 cannot read this as-built file: not valid YAML or JSON: while parsing a flow sequence: did not find expected ',' or ']'",
		"IDL001 error routes.yaml:4:9 as-built value not used: metadata.name has the tag !!binary; idemlint reads only plain strings, numbers and booleans here",
		"IDL001 error routes.yaml:7:10 as-built value not used: spec.hosts is not a list",
		"IDL001 error routes.yaml:9:27 as-built value not used: match.uri: not an RE2 regular expression: error parsing regexp: missing closing ): `^(?:(unclosed)$`",
		"IDL001 error routes.yaml:37:9 as-built value not used: data.mesh is not valid YAML: go-yaml load error in parser (while parsing a flow sequence) at L1.C25-L2.C1: did not find expected ',' or ']'",
		// The same ConfigMap twice, differing: one resource, the first used.
		"IDL001 error routes.yaml:28:1 as-built resource not used: two definitions of ConfigMap ingress-nginx/ingress-nginx-controller, which differ: the first is used; keep one",
		"IDL001 error routes.yaml:11:25 as-built value not used: retries.attempts is \"two\", not a whole number",
		// Judged for each of the Ingress's two routes, reported once.
		"IDL001 error routes.yaml:16:35 as-built value not used: proxy-next-upstream-tries is \"3x\", not a whole number",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if clean := Parse("clean.yaml", []byte("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: orders}\nspec: {http: [{route: [{destination: {host: orders}}]}]}\n")); len(clean.FileFindings()) != 0 {
		t.Errorf("a clean file: %v", clean.FileFindings())
	}
}

// TestConfigProblemsWithoutRoutes: a cluster-wide configuration's value
// that is not understood is reported though no route it applies to was
// read (the mesh's retry also carries hops no resource binds).
func TestConfigProblemsWithoutRoutes(t *testing.T) {
	src := `apiVersion: v1
kind: ConfigMap
metadata: {name: istio, namespace: istio-system}
data:
  mesh: |
    defaultHttpRetryPolicy:
      attempts: many
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ingress-nginx-controller, namespace: ingress-nginx}
data: {proxy-next-upstream-tries: "3x"}
`
	var got []string
	for _, f := range Parse("cluster.yaml", []byte(src)).FileFindings() {
		got = append(got, fmt.Sprintf("%s:%d:%d %s", f.File, f.Line, f.Column, f.Message))
	}
	want := []string{
		`cluster.yaml:7:17 as-built value not used: retries.attempts is "many", not a whole number`,
		`cluster.yaml:12:35 as-built value not used: proxy-next-upstream-tries is "3x", not a whole number`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
