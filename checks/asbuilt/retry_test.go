package asbuilt

import (
	"strings"
	"testing"
)

// conditions writes a retry's attempts and conditions in retry_on terms.
func conditions(r Retry) string {
	var parts []string
	for _, c := range r.Conditions {
		parts = append(parts, c.String())
	}
	attempts := "unknown"
	if r.AttemptsKnown {
		attempts = string(rune('0' + r.Attempts))
	}
	return attempts + " " + strings.Join(parts, ",")
}

func TestEnvoyRetry(t *testing.T) {
	at := Pos{File: "vs.yaml", Line: 3, Column: 5}
	w := func(v string) *setting { return &setting{Value: v, From: Origin{At: at}} }
	tests := []struct {
		name                      string
		attempts, retryOn, perTry *setting
		want                      string
		resends                   bool
	}{
		{"no retries written: Istio's default", nil, nil, nil, "3 connect_error,503", true},
		{"attempts 0 turns retries off", w("0"), w("5xx"), nil, "1 ", false},
		{"attempts only: the default conditions", w("1"), nil, nil, "2 connect_error,503", true},
		{"connect failures only", w("3"), w("connect-failure,refused-stream,reset-before-request"), nil, "4 connect_error", false},
		{"reset is after receipt", w("2"), w("reset"), nil, "3 timeout", true},
		{"5xx: codes, no answer, connect failures", w("2"), w("5xx"), nil, "3 500-599,timeout,connect_error", true},
		{"bare codes are retriable status codes", w("2"), w("connect-failure,409, 503"), nil, "3 connect_error,409,503", true},
		{"retriable-status-codes without codes retries none", w("2"), w("retriable-status-codes"), nil, "3 ", false},
		{"retriable-4xx is 409", w("1"), w("retriable-4xx"), nil, "2 409", true},
		{"gRPC conditions do not apply to HTTP", w("2"), w("cancelled,unavailable,deadline-exceeded,internal,resource-exhausted"), nil, "3 ", false},
		{"unknown conditions resend after receipt", w("2"), w("retriable-headers"), nil, "3 retriable-headers", true},
		{"a per-try timeout under reset", w("2"), w("connect-failure,reset"), w("2s"), "3 connect_error,timeout", true},
		{"a per-try timeout alone is not retried", w("2"), w("connect-failure"), w("2s"), "3 connect_error", false},
	}
	for _, tt := range tests {
		r, problems := envoyRetry(tt.attempts, tt.retryOn, tt.perTry, at)
		if len(problems) > 0 {
			t.Errorf("%s: problems %v", tt.name, problems)
		}
		if got := conditions(r); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if r.ResendsAfterReceipt() != tt.resends {
			t.Errorf("%s: resends after receipt = %v", tt.name, !tt.resends)
		}
	}
	r, _ := envoyRetry(nil, nil, nil, at)
	if d, ok := r.FromDefault(); !ok || d != istioRetries || r.Conditions[1].From.Default != istioRetriableStatusCodes {
		t.Errorf("Istio's default policy is not attributed to its defaults: %v", d)
	}
	if _, problems := envoyRetry(w("two"), nil, nil, at); len(problems) != 1 || problems[0].At != at {
		t.Errorf("attempts \"two\": problems %v", problems)
	}
}

func TestNginxRetry(t *testing.T) {
	at := Pos{File: "ing.yaml", Line: 7, Column: 9}
	w := func(v string) *setting { return &setting{Value: v, From: Origin{At: at}} }
	def := func(d *Default) *setting { return defaulted(d, at) }
	tests := []struct {
		name          string
		next, tries   *setting
		nonIdem       *setting
		put, post     string
		putR, postR   bool
		postIsDefault bool
	}{
		{"defaults", def(nginxProxyNextUpstream), def(nginxProxyNextUpstreamTries), def(nginxRetryNonIdempotent),
			"3 timeout", "3 connect_error", true, false, false},
		{"status codes", w("error timeout http_502 http_503"), w("2"), def(nginxRetryNonIdempotent),
			"2 timeout,502,503", "2 connect_error", true, false, false},
		{"non_idempotent in the list", w("error non_idempotent"), w("3"), def(nginxRetryNonIdempotent),
			"3 timeout", "3 timeout", true, true, false},
		{"retry-non-idempotent in the ConfigMap", w("timeout http_503"), w("3"), w("true"),
			"3 timeout,503", "3 timeout,503", true, true, false},
		{"off", w("off"), w("3"), def(nginxRetryNonIdempotent), "1 ", "1 ", false, false, false},
		{"one try", w("error timeout"), w("1"), def(nginxRetryNonIdempotent), "1 timeout", "1 connect_error", false, false, false},
	}
	for _, tt := range tests {
		put, _ := nginxRetry(tt.next, tt.tries, tt.nonIdem, false)
		post, _ := nginxRetry(tt.next, tt.tries, tt.nonIdem, true)
		if got := conditions(put); got != tt.put {
			t.Errorf("%s: PUT %q, want %q", tt.name, got, tt.put)
		}
		if got := conditions(post); got != tt.post {
			t.Errorf("%s: POST %q, want %q", tt.name, got, tt.post)
		}
		if put.ResendsAfterReceipt() != tt.putR || post.ResendsAfterReceipt() != tt.postR {
			t.Errorf("%s: resends after receipt PUT %v POST %v", tt.name, put.ResendsAfterReceipt(), post.ResendsAfterReceipt())
		}
	}
	unlimited, _ := nginxRetry(w("error"), w("0"), def(nginxRetryNonIdempotent), false)
	if unlimited.Attempts != 0 || !unlimited.Retries() {
		t.Errorf("tries 0 is unlimited: attempts %d", unlimited.Attempts)
	}
	bad, problems := nginxRetry(w("error"), w("lots"), def(nginxRetryNonIdempotent), false)
	if len(problems) != 1 || bad.Attempts != 3 || bad.AttemptsFrom.Default != nginxProxyNextUpstreamTries {
		t.Errorf("tries \"lots\": attempts %d from %v, problems %v; want the default 3", bad.Attempts, bad.AttemptsFrom, problems)
	}
}

func TestGatewayRetry(t *testing.T) {
	rule := Pos{File: "r.yaml", Line: 4, Column: 5}
	stanza := Pos{File: "r.yaml", Line: 9, Column: 7}
	none, _ := gatewayRetry(Pos{}, false, nil, nil, rule)
	if conditions(none) != "1 " || none.AttemptsFrom.Default != gatewayNoRetry {
		t.Errorf("no retry: %q", conditions(none))
	}
	codes := []Text{{Value: "503", At: stanza}, {Value: "600", At: stanza}}
	r, problems := gatewayRetry(stanza, true, &setting{Value: "2", From: Origin{At: stanza}}, codes, rule)
	if conditions(r) != "3 connect_error,503" || len(problems) != 1 {
		t.Errorf("retry: %q, problems %v", conditions(r), problems)
	}
	unknown, _ := gatewayRetry(stanza, true, nil, nil, rule)
	// Without codes, only connection errors: never after receipt.
	if unknown.AttemptsKnown || unknown.AttemptsFrom.Default != gatewayRetryAttempts || !unknown.Retries() || unknown.ResendsAfterReceipt() {
		t.Errorf("retry without attempts: %q from %v", conditions(unknown), unknown.AttemptsFrom)
	}
}

func TestConditionWithin(t *testing.T) {
	retryOn := []string{"connect_error", "502", "503", "504"}
	for _, tt := range []struct {
		c    Condition
		want bool
	}{
		{Condition{Kind: ConnectError}, true},
		{Condition{Kind: Timeout}, false},
		{Condition{Kind: Status, Low: 502, High: 504}, true},
		{Condition{Kind: Status, Low: 500, High: 599}, false},
		{Condition{Kind: Other, Platform: "retriable-headers"}, false},
	} {
		if got := tt.c.Within(retryOn); got != tt.want {
			t.Errorf("%s within %v = %v", tt.c, retryOn, got)
		}
	}
}

func TestRouteDrops(t *testing.T) {
	at := Pos{File: "x.yaml", Line: 1, Column: 1}
	rt := &Route{
		Removed:          []Header{{Name: "X-Idempotency-Key", At: at}},
		Forwards:         &Forwarding{Headers: []Header{{Name: "Authorization"}, {Name: "x_tenant"}}},
		DropsUnderscores: &Origin{Default: nginxUnderscoresInHeaders},
	}
	for name, want := range map[string]bool{"x-idempotency-key": true, "authorization": false, "x-tenant-id": true, "x_tenant": true} {
		if _, got := rt.Drops(name); got != want {
			t.Errorf("drops %s = %v", name, got)
		}
	}
	if o, _ := rt.Drops("x_tenant"); o.Default != nginxUnderscoresInHeaders {
		t.Errorf("x_tenant is dropped for its underscore, not %v", o)
	}
	cors := &CORS{AllowHeaders: []Text{{Value: "Content-Type"}}}
	if cors.Allows("x-idempotency-key") || !cors.Allows("content-type") {
		t.Error("CORS.Allows")
	}
	cors.AllowHeaders = append(cors.AllowHeaders, Text{Value: "*"})
	if _, ok := cors.Wildcard(); !ok || !cors.Allows("x-idempotency-key") {
		t.Error("CORS with *")
	}
}
