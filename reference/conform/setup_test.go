package conform

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/reference"
)

// policyWithError writes the orders policy without idempotency_inflight
// (an IDL109 error) into a set directory and returns the file.
func policyWithError(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(ordersPolicy)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "idempotency_inflight")
	if src, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "adapter.json")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Spec 6.7: against a target an error finding is a note; --reference
// refuses what the engine refuses, naming the findings.
func TestUsePolicyRefusesInProcessWhatTheEngineRefuses(t *testing.T) {
	path := policyWithError(t)

	var target Config
	if err := target.UsePolicy(filepath.Dir(path), false, nil); err != nil {
		t.Fatalf("against a target: %v", err)
	}
	if target.Policy == nil || !hasRule(target, "IDL109") || target.Handler != nil {
		t.Errorf("against a target: policy %v, findings %v, handler %v; want the policy with IDL109 as a note", target.Policy, target.PolicyFindings, target.Handler)
	}

	var inProcess Config
	err := inProcess.UsePolicy(path, true, nil)
	var invalid *reference.InvalidPolicyError
	if !errors.As(err, &invalid) || !strings.HasPrefix(err.Error(), "refusing to probe: "+path+" is not a usable adapter policy (") || !strings.Contains(err.Error(), " IDL109 ") {
		t.Errorf("--reference: %v, want the engine's refusal naming IDL109", err)
	}

	var clean Config
	if err := clean.UsePolicy(ordersPolicy, true, nil); err != nil || clean.Handler == nil || clean.Effects == nil {
		t.Errorf("--reference with a clean policy: %v; want the engine in process", err)
	}
}

func hasRule(c Config, rule string) bool {
	for _, f := range c.PolicyFindings {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

func TestPolicyFile(t *testing.T) {
	empty := t.TempDir()
	missing := filepath.Join(empty, "absent.json")
	for _, tc := range []struct{ path, want string }{
		{missing, "--policy " + missing + ": no such file or directory"},
		{empty, "--policy " + empty + ": it holds no adapter policy"},
	} {
		if _, err := PolicyFile(tc.path, "", nil); err == nil || err.Error() != tc.want {
			t.Errorf("PolicyFile(%s) = %v, want %s", tc.path, err, tc.want)
		}
	}
	dir := filepath.Dir(policyWithError(t))
	if got, err := PolicyFile(dir, "orders.create", nil); err != nil || got != filepath.Join(dir, "adapter.json") {
		t.Errorf("PolicyFile(set) = %q, %v; want its one policy", got, err)
	}
}

func TestParseHeadersAndReadBody(t *testing.T) {
	t.Setenv("IDEMLINT_TEST_AUTH", "Authorization: Bearer 0123456789")
	hs, err := ParseHeaders([]string{"X-Api-Key: abcdefghij"}, []string{"IDEMLINT_TEST_AUTH"})
	if err != nil || len(hs) != 2 || hs[0].Name != "X-Api-Key" || hs[1].Name != "Authorization" {
		t.Errorf("ParseHeaders = %v, %v; want both headers, flags first", hs, err)
	}
	if _, err := ParseHeaders(nil, []string{"IDEMLINT_TEST_UNSET"}); err == nil || err.Error() != "--header-env IDEMLINT_TEST_UNSET: the environment variable is not set" {
		t.Errorf("ParseHeaders of an unset variable = %v", err)
	}

	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if body, err := ReadBody(""); body != nil || err != nil {
		t.Errorf(`ReadBody("") = %v, %v; want nothing`, body, err)
	}
	if body, err := ReadBody(write("ok.json", `{"sku": "P1"}`)); err != nil || body == nil {
		t.Errorf("ReadBody(object) = %v, %v", body, err)
	}
	list := write("list.json", `[1]`)
	if _, err := ReadBody(list); err == nil || err.Error() != "--body: "+list+" holds no JSON object; conform adds its probe fields to an object" {
		t.Errorf("ReadBody(array) = %v", err)
	}
	broken := write("broken.json", "{\n  \"sku\": }")
	if _, err := ReadBody(broken); err == nil || !strings.HasPrefix(err.Error(), "--body: "+broken+":2:") {
		t.Errorf("ReadBody(malformed) = %v, want its position", err)
	}
}
