package asbuilt

import (
	"strconv"
	"strings"
	"testing"
)

// TestDefaults holds the table to what findings and README need of each
// entry, and the values the readers parse to what the platforms document.
func TestDefaults(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Defaults {
		if d.ID == "" || d.Platform == "" || d.Setting == "" || d.Value == "" || d.Source == "" || seen[d.ID] {
			t.Errorf("incomplete or repeated entry %+v", d)
		}
		seen[d.ID] = true
	}
	for _, tt := range []struct {
		d    *Default
		want string
	}{
		{istioRetries, "2"},
		{istioRetriableStatusCodes, "503"},
		{nginxProxyNextUpstream, "error timeout"},
		{nginxProxyNextUpstreamTries, "3"},
		{nginxRetryNonIdempotent, "false"},
		{nginxUnderscoresInHeaders, "false"},
		{nginxCORSAllowCredentials, "true"},
	} {
		if tt.d.Value != tt.want {
			t.Errorf("%s = %q, want %q", tt.d.ID, tt.d.Value, tt.want)
		}
	}
	// The default CORS list lacks any idempotency key header: the reason
	// the documentation names it.
	cors := &CORS{AllowHeaders: splitList(Text{Value: nginxCORSAllowHeaders.Value})}
	if len(cors.AllowHeaders) != 9 || cors.Allows("x-idempotency-key") || cors.Allows("idempotency-key") || !cors.Allows("content-type") {
		t.Errorf("ingress-nginx default cors-allow-headers: %v", cors.AllowHeaders)
	}
	if _, err := strconv.ParseBool(nginxCORSAllowCredentials.Value); err != nil {
		t.Error(err)
	}
}

// TestExplainDefault: "idemlint explain ID" of a default that findings
// name says its setting, value and source.
func TestExplainDefault(t *testing.T) {
	d, ok := LookupDefault("istio.retries")
	if !ok || d != istioRetries {
		t.Fatalf("LookupDefault(istio.retries) = %v, %v", d, ok)
	}
	var b strings.Builder
	if err := d.Explain(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"istio.retries", d.Setting, d.Value, d.Source} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("explain lacks %q:\n%s", want, b.String())
		}
	}
	if _, ok := LookupDefault("istio.retry"); ok {
		t.Error("LookupDefault found a default that is not in the table")
	}
}
