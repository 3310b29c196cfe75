package conform

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// An invocation that cannot start says why, and in the json format writes
// the reason to stdout too, so a script reading stdout gets a JSON object.
func TestInvocationErrors(t *testing.T) {
	for _, tc := range []struct {
		in   Invocation
		want string
	}{
		{Invocation{}, "give the policy to probe with --policy FILE|DIR"},
		{Invocation{PolicyPath: ordersPolicy}, "give the service to probe with --target URL, or --reference"},
		{Invocation{PolicyPath: ordersPolicy, Reference: true, Config: Config{Targets: []string{"http://127.0.0.1:1"}}}, "--target and --reference exclude each other: --reference probes the engine in process"},
		{Invocation{PolicyPath: ordersPolicy, Reference: true, Config: Config{Insecure: true}}, "--effects-url and --insecure concern a --target; --reference counts executions itself"},
		{Invocation{PolicyPath: ordersPolicy, Reference: true, Format: "sarif"}, "unknown format \"sarif\"; want one of text, json, junit"},
		{Invocation{PolicyPath: "nope.json", Reference: true}, "--policy nope.json: no such file or directory"},
		{Invocation{PolicyPath: ordersPolicy, Reference: true, HeaderEnvs: []string{"IDEMLINT_TEST_NO_SUCH_VARIABLE"}}, "--header-env IDEMLINT_TEST_NO_SUCH_VARIABLE: the environment variable is not set"},
		{Invocation{PolicyPath: ordersPolicy, Config: Config{Targets: []string{"http://127.0.0.1:1"}}}, "the target http://127.0.0.1:1 does not answer: no answer: dial tcp 127.0.0.1:1: connect: connection refused"},
	} {
		for _, format := range []string{"text", "json"} {
			in := tc.in
			if in.Format == "" {
				in.Format = format
			} else if format == "json" {
				continue
			}
			var stdout, stderr strings.Builder
			rep, err := in.Execute(context.Background(), &stdout, &stderr)
			if err == nil || err.Error() != tc.want || rep != nil {
				t.Errorf("%s %+v: %v, want %s", format, in, err, tc.want)
				continue
			}
			var doc struct{ Error string }
			switch {
			case format == "text" && stdout.Len() != 0:
				t.Errorf("text %+v wrote %q to stdout, want nothing", in, stdout.String())
			case format == "json" && (json.Unmarshal([]byte(stdout.String()), &doc) != nil || doc.Error != tc.want):
				t.Errorf("json %+v wrote %q to stdout, want {\"error\": %q}", in, stdout.String(), tc.want)
			}
		}
	}
}

// --reference probes the engine in process: every probe passes but those
// it cannot run (CF18 needs replicas, CF19 a browser origin).
func TestInvocationReference(t *testing.T) {
	var stdout, stderr strings.Builder
	rep, err := Invocation{PolicyPath: ordersPolicy, Reference: true, Format: "text"}.Execute(context.Background(), &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, r := range rep.Results {
		if r.Status == Skip {
			skipped = append(skipped, r.ID)
		}
	}
	if rep.Count(Fail) != 0 || strings.Join(skipped, " ") != "CF18 CF19" || !strings.Contains(stdout.String(), "PASS CF03 ") {
		t.Errorf("--reference: %d failed, skipped %v, stdout:\n%s", rep.Count(Fail), skipped, stdout.String())
	}
}
