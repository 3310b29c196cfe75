package conform

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idemlint/idemlint/checks/report/junitxml"
)

// sampleReport has one probe of each outcome.
func sampleReport() *Report {
	return &Report{
		Bounds: Bounds{
			Target: "http://127.0.0.1:8080", Operation: "orders.create", Probes: 3, MaxRequests: 4, Concurrency: 16,
			Timeout: 5 * time.Second, WaitTimeout: 5 * time.Second, Deadline: time.Minute, Headers: []string{"Authorization: <redacted>"},
		},
		Results: []Result{
			{ID: "CF01", Name: "key-required request without the key", Checks: "on_missing", Status: Pass,
				Expected: `400 with error_code "idempotency_key_required" (on_missing)`, Requests: 1, Duration: 1500 * time.Microsecond},
			{ID: "CF03", Name: "same key, same payload, after CF02 finished", Checks: "idempotency_replay", Status: Fail,
				Expected: "201 and the body of CF02's answer byte for byte", Got: `another body: 201 Created, body {"id":"b"}`,
				Diff: "(-CF02's answer +the replay)\n  map[string]any{\n- \t\"id\": string(\"a\"),\n+ \t\"id\": string(\"b\"),\n  }", Requests: 1, Duration: 2 * time.Millisecond},
			{ID: "CF08", Name: "same key on a second operation", Checks: "idempotency_scope operation_key", Status: Skip,
				Reason: "the policy declares no second state-changing operation"},
		},
		Requests: 2,
		Duration: 410 * time.Millisecond,
	}
}

// write runs a writer over a report as Run does.
func write(t *testing.T, format string, rep *Report) (stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	w, err := NewWriter(format, &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Begin(rep.Bounds); err != nil {
		t.Fatal(err)
	}
	for i := range rep.Results {
		if err := w.Probe(&rep.Results[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(rep); err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String()
}

const sampleBounds = "conform: 3 probes, at most 4 requests, concurrency 16, per-request timeout 5s, deadline 1m0s -> http://127.0.0.1:8080, operation orders.create, extra headers Authorization: <redacted>\n"

func TestText(t *testing.T) {
	stdout, stderr := write(t, "text", sampleReport())
	pad := strings.Repeat(" ", checksWidth)
	want := sampleBounds +
		"PASS CF01 on_missing" + pad[len("on_missing"):] + "  key-required request without the key\n" +
		"FAIL CF03 idempotency_replay" + pad[len("idempotency_replay"):] + "  same key, same payload, after CF02 finished\n" +
		"     expected: 201 and the body of CF02's answer byte for byte\n" +
		"     got:      another body: 201 Created, body {\"id\":\"b\"}\n" +
		"     diff (-CF02's answer +the replay):\n" +
		"         map[string]any{\n" +
		"       - \t\"id\": string(\"a\"),\n" +
		"       + \t\"id\": string(\"b\"),\n" +
		"         }\n" +
		"SKIP CF08 idempotency_scope operation_key" + pad[len("idempotency_scope operation_key"):] + "  same key on a second operation\n" +
		"     skipped: the policy declares no second state-changing operation\n" +
		"3 probes: 1 passed, 1 failed, 1 skipped (2 requests, 0.41s)\n"
	if diff := cmp.Diff(want, stdout); diff != "" || stderr != "" {
		t.Errorf("stdout (-want +got):\n%s\nstderr %q", diff, stderr)
	}
}

func TestJSON(t *testing.T) {
	stdout, stderr := write(t, "json", sampleReport())
	want := `{
  "target": "http://127.0.0.1:8080",
  "operation": "orders.create",
  "bounds": {
    "probes": 3,
    "max_requests": 4,
    "concurrency": 16,
    "timeout_ms": 5000,
    "wait_timeout_ms": 5000,
    "deadline_ms": 60000,
    "headers": [
      "Authorization: <redacted>"
    ]
  },
  "probes": [
    {
      "id": "CF01",
      "name": "key-required request without the key",
      "checks": "on_missing",
      "status": "pass",
      "expected": "400 with error_code \"idempotency_key_required\" (on_missing)",
      "requests": 1,
      "duration_ms": 1.5
    },
    {
      "id": "CF03",
      "name": "same key, same payload, after CF02 finished",
      "checks": "idempotency_replay",
      "status": "fail",
      "expected": "201 and the body of CF02's answer byte for byte",
      "got": "another body: 201 Created, body {\"id\":\"b\"}",
      "diff": "(-CF02's answer +the replay)\n  map[string]any{\n- \t\"id\": string(\"a\"),\n+ \t\"id\": string(\"b\"),\n  }",
      "requests": 1,
      "duration_ms": 2
    },
    {
      "id": "CF08",
      "name": "same key on a second operation",
      "checks": "idempotency_scope operation_key",
      "status": "skip",
      "reason": "the policy declares no second state-changing operation",
      "requests": 0,
      "duration_ms": 0
    }
  ],
  "summary": {
    "probes": 3,
    "passed": 1,
    "failed": 1,
    "skipped": 1,
    "requests": 2,
    "duration_ms": 410
  }
}
`
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if stderr != sampleBounds {
		t.Errorf("stderr %q, want the bounds line", stderr)
	}
}

func TestJUnit(t *testing.T) {
	stdout, stderr := write(t, "junit", sampleReport())
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="idemlint conform" tests="3" failures="1" errors="0" skipped="1" time="0.410">
  <testsuite name="conform http://127.0.0.1:8080, operation orders.create" tests="3" failures="1" errors="0" skipped="1" time="0.410">
    <testcase classname="idemlint.conform" name="CF01 on_missing: key-required request without the key" time="0.002"></testcase>
    <testcase classname="idemlint.conform" name="CF03 idempotency_replay: same key, same payload, after CF02 finished" time="0.002">
      <failure message="got another body: 201 Created, body {&#34;id&#34;:&#34;b&#34;}" type="idempotency_replay">expected: 201 and the body of CF02&#39;s answer byte for byte&#xA;got: another body: 201 Created, body {&#34;id&#34;:&#34;b&#34;}&#xA;diff (-CF02&#39;s answer +the replay)&#xA;  map[string]any{&#xA;- &#x9;&#34;id&#34;: string(&#34;a&#34;),&#xA;+ &#x9;&#34;id&#34;: string(&#34;b&#34;),&#xA;  }</failure>
    </testcase>
    <testcase classname="idemlint.conform" name="CF08 idempotency_scope operation_key: same key on a second operation" time="0.000">
      <skipped message="the policy declares no second state-changing operation"></skipped>
    </testcase>
  </testsuite>
</testsuites>
`
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if stderr != sampleBounds {
		t.Errorf("stderr %q, want the bounds line", stderr)
	}
	var parsed junitxml.Suites
	if err := xml.Unmarshal([]byte(stdout), &parsed); err != nil || len(parsed.Suites) != 1 || len(parsed.Suites[0].Cases) != 3 {
		t.Errorf("not one testcase per probe: %v %+v", err, parsed)
	}
}

func TestUnknownFormat(t *testing.T) {
	if _, err := NewWriter("sarif", nil, nil); errText(err) != `unknown format "sarif"; want one of text, json, junit` {
		t.Errorf("NewWriter(sarif) = %v", err)
	}
}
