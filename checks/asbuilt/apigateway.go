package asbuilt

import (
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/idemlint/idemlint/checks/pathmatch"
)

// AWS API Gateway (docs/as-built.md, Reading the configuration): an OpenAPI export with x-amazon-apigateway-*
// extensions. Names are those of the API Gateway developer guide's
// OpenAPI extensions.

// APIGateway is the platform's name in findings.
const APIGateway Platform = "api-gateway"

// apiGateway is the platform as platforms lists it.
var apiGateway = &platform{
	name:     APIGateway,
	export:   &exportReader{keys: []string{"openapi", "swagger"}, is: isAPIGatewayExport, read: (*fileRead).apiGateway},
	defaults: []*Default{apiGatewayHTTPIntegration},
}

// The defaults it relies on.
var (
	apiGatewayHTTPIntegration = &Default{
		ID:      "api-gateway.http-integration-headers",
		Setting: "x-amazon-apigateway-integration requestParameters (type http)",
		Value:   "only the headers mapped as integration.request.header.NAME are forwarded",
		Source:  "Amazon API Gateway developer guide, REST API integration types: an http (non-proxy) integration passes what its data mappings pass; http_proxy passes the whole request",
	}
)

const awsExtension = "x-amazon-apigateway-"

// anyMethod is API Gateway's operation for every method.
const anyMethod = awsExtension + "any-method"

// isAPIGatewayExport reports whether root is an OpenAPI (or Swagger)
// document with API Gateway extensions, at its top or in an operation.
func isAPIGatewayExport(r *reader, root *yaml.Node) bool {
	if r.field(root, "openapi") == nil && r.field(root, "swagger") == nil {
		return false
	}
	mapping := func(n *yaml.Node) []*yaml.Node {
		if n = r.visit(n); n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		return n.Content
	}
	for i, k := range mapping(root) {
		if i%2 == 0 && strings.HasPrefix(k.Value, awsExtension) {
			return true
		}
	}
	paths := mapping(r.field(root, "paths"))
	for i := 1; i < len(paths); i += 2 {
		item := mapping(paths[i])
		for j := 1; j < len(item); j += 2 {
			if r.field(item[j], awsExtension+"integration") != nil {
				return true
			}
		}
	}
	return false
}

// operationKeys are the keys of a path item that are operations.
var operationKeys = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, anyMethod: true}

func (f *fileRead) apiGateway(root *yaml.Node) {
	res := &Resource{Platform: APIGateway, Kind: "ApiGateway", At: f.pos(f.visit(root)), Traffic: AnyTraffic, fingerprint: fingerprint(root)}
	res.Name, _ = f.text(f.path(root, "info", "title"), "info.title")
	f.resources = append(f.resources, res)
	var cors *CORS
	if c := f.visit(f.field(root, awsExtension+"cors")); c != nil && !isNull(c) {
		cors = f.corsList(c, "allowHeaders", "allowCredentials")
	}
	templates, items := f.pairs(f.field(root, "paths"), "paths")
	for i, item := range items {
		template := Text{Value: templates[i].Value, At: f.pos(templates[i])}
		methods, ops := f.pairs(item, "paths."+template.Value)
		for j, op := range ops {
			method := strings.ToLower(methods[j].Value)
			if !operationKeys[method] {
				continue
			}
			rt := &Route{Resource: res, At: f.pos(methods[j]), CORS: cors}
			rt.Retry = Retry{Attempts: 1, AttemptsKnown: true}
			match := Match{Path: f.matcher(pathmatch.Template, template, "paths"), At: rt.At}
			if method != anyMethod {
				match.Method = f.matcher(pathmatch.Exact, Text{Value: strings.ToUpper(method), At: rt.At}, "method")
			}
			rt.Matches = []Match{match}
			f.integration(rt, f.visit(f.field(op, awsExtension+"integration")))
			res.Routes = append(res.Routes, rt)
		}
	}
	res.rank(pathmatch.APIGateway)
}

// integration reads an operation's integration: a REST "http" (non-proxy)
// integration forwards only the request headers its requestParameters
// map from the method request ("method.request.header.NAME"); a mapping
// from anything else (a quoted constant, a context variable) sets the
// header instead.
func (f *fileRead) integration(rt *Route, n *yaml.Node) {
	if n == nil || isNull(n) {
		return
	}
	typ, _ := f.text(f.field(n, "type"), "integration type")
	if !strings.EqualFold(typ.Value, "http") {
		return
	}
	rt.Forwards = &Forwarding{From: defaulted(apiGatewayHTTPIntegration, f.pos(n)).From}
	keys, values := f.pairs(f.field(n, "requestParameters"), "requestParameters")
	for i, k := range keys {
		name, ok := strings.CutPrefix(k.Value, "integration.request.header.")
		if !ok {
			continue
		}
		h := Header{Name: name, At: f.pos(k), Field: "requestParameters"}
		if from, _ := f.text(values[i], "requestParameters."+k.Value); strings.HasPrefix(from.Value, "method.request.header.") {
			rt.Forwards.Headers = append(rt.Forwards.Headers, h)
		} else {
			rt.Set = append(rt.Set, h)
		}
	}
}
