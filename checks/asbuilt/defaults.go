package asbuilt

// Default is what a platform does when nothing is written (spec 8.2). It
// counts exactly like what is written, and a finding it causes names it.
// Value is written as the platform's own setting would be, and the
// readers parse it like a written one, so the table is the only place a
// default lives.
type Default struct {
	ID       string // stable, for messages and README: "istio.retries"
	Platform Platform
	// Setting is what is not written: "VirtualService http[].retries".
	Setting string
	Value   string // as the platform would read it: "error timeout"
	Source  string // the documentation or code it comes from
}

func (d *Default) String() string {
	return d.Setting + " defaults to " + d.Value + " (" + d.Source + ")"
}

// The defaults idemlint applies; Defaults lists them in this order.
var (
	IstioRetries = &Default{
		ID: "istio.retries", Platform: Istio,
		Setting: "VirtualService http[].retries.attempts (no retries written, no mesh defaultHttpRetryPolicy)",
		Value:   "2",
		Source:  "istio/istio pilot/pkg/networking/core/route/retry/retry.go, defaultPolicy: NumRetries 2",
	}
	IstioRetryOn = &Default{
		ID: "istio.retry-on", Platform: Istio,
		Setting: "VirtualService http[].retries.retryOn",
		Value:   "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
		Source:  "istio/istio pilot/pkg/networking/core/route/retry/retry.go, defaultPolicy: RetryOn",
	}
	IstioRetriableStatusCodes = &Default{
		ID: "istio.retriable-status-codes", Platform: Istio,
		Setting: "retriable status codes (no status code in retryOn)",
		Value:   "503",
		Source:  "istio/istio pilot/pkg/networking/core/route/retry/retry.go, defaultPolicy: RetriableStatusCodes [503]",
	}
	NginxProxyNextUpstream = &Default{
		ID: "ingress-nginx.proxy-next-upstream", Platform: IngressNginx,
		Setting: "proxy-next-upstream",
		Value:   "error timeout",
		Source:  "ingress-nginx docs, user-guide/nginx-configuration/configmap.md#proxy-next-upstream",
	}
	NginxProxyNextUpstreamTries = &Default{
		ID: "ingress-nginx.proxy-next-upstream-tries", Platform: IngressNginx,
		Setting: "proxy-next-upstream-tries",
		Value:   "3",
		Source:  "ingress-nginx docs, user-guide/nginx-configuration/configmap.md#proxy-next-upstream-tries",
	}
	NginxRetryNonIdempotent = &Default{
		ID: "ingress-nginx.retry-non-idempotent", Platform: IngressNginx,
		Setting: "retry-non-idempotent",
		Value:   "false",
		Source:  "ingress-nginx docs, user-guide/nginx-configuration/configmap.md#retry-non-idempotent; nginx proxy_next_upstream non_idempotent: POST, LOCK and PATCH are not passed to the next server once sent",
	}
	NginxCORSAllowHeaders = &Default{
		ID: "ingress-nginx.cors-allow-headers", Platform: IngressNginx,
		Setting: "nginx.ingress.kubernetes.io/cors-allow-headers",
		Value:   "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization",
		Source:  "ingress-nginx docs, user-guide/nginx-configuration/annotations.md#enable-cors",
	}
	NginxCORSAllowCredentials = &Default{
		ID: "ingress-nginx.cors-allow-credentials", Platform: IngressNginx,
		Setting: "nginx.ingress.kubernetes.io/cors-allow-credentials",
		Value:   "true",
		Source:  "ingress-nginx docs, user-guide/nginx-configuration/annotations.md#enable-cors",
	}
	NginxUnderscoresInHeaders = &Default{
		ID: "ingress-nginx.enable-underscores-in-headers", Platform: IngressNginx,
		Setting: "enable-underscores-in-headers",
		Value:   "false",
		Source:  "ingress-nginx docs, user-guide/nginx-configuration/configmap.md#enable-underscores-in-headers; nginx underscores_in_headers: such headers are dropped",
	}
	GatewayNoRetry = &Default{
		ID: "gateway-api.no-retry", Platform: GatewayAPI,
		Setting: "HTTPRoute rules[].retry",
		Value:   "no retry",
		Source:  "Gateway API HTTPRouteRule.retry (GEP-1731): retries are configured by the retry stanza",
	}
	GatewayRetryConnectionErrors = &Default{
		ID: "gateway-api.retry-connection-errors", Platform: GatewayAPI,
		Setting: "HTTPRoute rules[].retry (conditions besides codes)",
		Value:   "connection errors (connect_error)",
		Source:  "Gateway API HTTPRouteRetry (GEP-1731): implementations MUST retry on connection errors if a retry stanza is configured",
	}
	GatewayRetryAttempts = &Default{
		ID: "gateway-api.retry-attempts", Platform: GatewayAPI,
		Setting: "HTTPRoute rules[].retry.attempts",
		Value:   "implementation-specific",
		Source:  "Gateway API HTTPRouteRetry.attempts: when unspecified, the number of retries is implementation-specific",
	}
	APIGatewayHTTPIntegration = &Default{
		ID: "api-gateway.http-integration-headers", Platform: APIGateway,
		Setting: "x-amazon-apigateway-integration requestParameters (type http)",
		Value:   "only the headers mapped as integration.request.header.NAME are forwarded",
		Source:  "Amazon API Gateway developer guide, REST API integration types: an http (non-proxy) integration passes what its data mappings pass; http_proxy passes the whole request",
	}
)

// Defaults are every default, for README and explain.
var Defaults = []*Default{
	IstioRetries, IstioRetryOn, IstioRetriableStatusCodes,
	NginxProxyNextUpstream, NginxProxyNextUpstreamTries, NginxRetryNonIdempotent,
	NginxCORSAllowHeaders, NginxCORSAllowCredentials, NginxUnderscoresInHeaders,
	GatewayNoRetry, GatewayRetryConnectionErrors, GatewayRetryAttempts,
	APIGatewayHTTPIntegration,
}
