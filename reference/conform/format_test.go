package conform

import (
	"encoding/xml"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/report/junitxml"
)

// sampleReport has one probe of each outcome.
func sampleReport() *Report {
	return &Report{
		Plan: Plan{Bounds: Bounds{
			Targets: []string{"http://127.0.0.1:8080"}, Operation: "orders.create", Probes: 3, MaxRequests: 4, Concurrency: 16,
			Timeout: 5 * time.Second, WaitTimeout: 5 * time.Second, Deadline: time.Minute, Headers: []string{"Authorization: <redacted>"},
			MaxBodyBytes: MaxResponseBytes,
		},
			Notes: []string{"the example body of orders.create is not a JSON object; conform sends {} plus its probe fields instead"},
			PolicyFindings: []checks.Finding{{Rule: "IDL107", Severity: checks.Error, File: "adapter.json", Line: 9, Column: 24, Pointer: "/idempotency_scope",
				Message: `add "operation_key" to idempotency_scope: otherwise one key is one record across operations`}},
		},
		Results: []Result{
			{ID: "CF01", Name: "key-required request without the key", Checks: "on_missing", Status: Pass,
				Expected: `400 with error_code "idempotency_key_required" (on_missing)`, Note: "sent to the target alone", Requests: 1, Duration: 1500 * time.Microsecond},
			{ID: "CF03", Name: "same key, same payload, after CF02 finished", Checks: "idempotency_replay", Status: Fail,
				Expected: "201 and the body of CF02's answer byte for byte", Got: `another body: 201 Created, body {"id":"b"}`,
				Hint: "the body has the code under /error/code; the spec wants it in a top-level error_code member",
				Diff: "(-CF02's answer +the replay)\n-/id: \"a\"\n+/id: \"b\"", Requests: 1, Duration: 2 * time.Millisecond},
			{ID: "CF08", Name: "same key on a second operation", Checks: "scope operation_key", Status: Skip,
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
	w, err := NewWriter(format, &out, &errOut, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Begin(&rep.Plan); err != nil {
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

// samplePlan is what every format writes first (text to stdout, the
// others to stderr).
const samplePlan = `conform: 3 probes, at most 4 requests, concurrency 16, per-request timeout 5s, deadline 1m0s, bodies
  up to 1048576 bytes -> http://127.0.0.1:8080, operation orders.create, extra headers
  Authorization: <redacted>
note: the example body of orders.create is not a JSON object; conform sends {} plus its probe fields
  instead
note: the policy as written: adapter.json:9:24: error IDL107 add "operation_key" to
  idempotency_scope: otherwise one key is one record across operations
`

func TestText(t *testing.T) {
	stdout, stderr := write(t, "text", sampleReport())
	want := samplePlan + `PASS CF01 on_missing                  key-required request without the key
     note:     sent to the target alone
FAIL CF03 idempotency_replay          same key, same payload, after CF02 finished
     expected: 201 and the body of CF02's answer byte for byte
     got:      another body: 201 Created, body {"id":"b"}
     hint:     the body has the code under /error/code; the spec wants it in a top-level error_code
               member
     diff (-CF02's answer +the replay):
       -/id: "a"
       +/id: "b"
SKIP CF08 scope operation_key         same key on a second operation
     skipped: the policy declares no second state-changing operation
3 probes: 1 passed, 1 failed, 1 skipped (2 requests, 0.41s)
`
	if diff := cmp.Diff(want, stdout); diff != "" || stderr != "" {
		t.Errorf("stdout (-want +got):\n%s\nstderr %q", diff, stderr)
	}
	for line := range strings.Lines(stdout) {
		if n := utf8.RuneCountInString(strings.TrimSuffix(line, "\n")); n > Width {
			t.Errorf("a line of %d characters: %s", n, line)
		}
	}
}

// On a terminal the outcome is coloured, and nothing else changes.
func TestTextColor(t *testing.T) {
	var out strings.Builder
	w, err := NewWriter("text", &out, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	rep := sampleReport()
	for i := range rep.Results {
		if err := w.Probe(&rep.Results[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"\x1b[32;1mPASS\x1b[0;22m CF01 ", "\x1b[31;1mFAIL\x1b[0;22m CF03 ", "\x1b[33mSKIP\x1b[0m CF08 "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	plain, _ := write(t, "text", sampleReport())
	if got := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(out.String(), ""); !strings.Contains(plain, got) {
		t.Errorf("colour changed more than the outcome:\n%s", got)
	}
}

func TestJSON(t *testing.T) {
	stdout, stderr := write(t, "json", sampleReport())
	want := `{
  "target": "http://127.0.0.1:8080",
  "targets": [
    "http://127.0.0.1:8080"
  ],
  "operation": "orders.create",
  "bounds": {
    "probes": 3,
    "max_requests": 4,
    "concurrency": 16,
    "timeout_ms": 5000,
    "wait_timeout_ms": 5000,
    "deadline_ms": 60000,
    "max_body_bytes": 1048576,
    "headers": [
      "Authorization: <redacted>"
    ]
  },
  "notes": [
    "the example body of orders.create is not a JSON object; conform sends {} plus its probe fields instead"
  ],
  "policy_findings": [
    {
      "rule": "IDL107",
      "severity": "error",
      "file": "adapter.json",
      "line": 9,
      "column": 24,
      "pointer": "/idempotency_scope",
      "message": "add \"operation_key\" to idempotency_scope: otherwise one key is one record across operations"
    }
  ],
  "probes": [
    {
      "id": "CF01",
      "name": "key-required request without the key",
      "checks": "on_missing",
      "status": "pass",
      "expected": "400 with error_code \"idempotency_key_required\" (on_missing)",
      "note": "sent to the target alone",
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
      "hint": "the body has the code under /error/code; the spec wants it in a top-level error_code member",
      "diff": "(-CF02's answer +the replay)\n-/id: \"a\"\n+/id: \"b\"",
      "requests": 1,
      "duration_ms": 2
    },
    {
      "id": "CF08",
      "name": "same key on a second operation",
      "checks": "scope operation_key",
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
	if stderr != samplePlan {
		t.Errorf("stderr %q, want the plan", stderr)
	}
}

func TestJUnit(t *testing.T) {
	stdout, stderr := write(t, "junit", sampleReport())
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="idemlint conform" tests="3" failures="1" errors="0" skipped="1" time="0.410">
  <testsuite name="conform http://127.0.0.1:8080, operation orders.create" tests="3" failures="1" errors="0" skipped="1" time="0.410">
    <testcase classname="idemlint.conform" name="CF01 on_missing: key-required request without the key" time="0.002"></testcase>
    <testcase classname="idemlint.conform" name="CF03 idempotency_replay: same key, same payload, after CF02 finished" time="0.002">
      <failure message="got another body: 201 Created, body {&#34;id&#34;:&#34;b&#34;}" type="idempotency_replay">expected: 201 and the body of CF02&#39;s answer byte for byte&#xA;got: another body: 201 Created, body {&#34;id&#34;:&#34;b&#34;}&#xA;hint: the body has the code under /error/code; the spec wants it in a top-level error_code member&#xA;diff (-CF02&#39;s answer +the replay)&#xA;-/id: &#34;a&#34;&#xA;+/id: &#34;b&#34;</failure>
    </testcase>
    <testcase classname="idemlint.conform" name="CF08 scope operation_key: same key on a second operation" time="0.000">
      <skipped message="the policy declares no second state-changing operation"></skipped>
    </testcase>
  </testsuite>
</testsuites>
`
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if stderr != samplePlan {
		t.Errorf("stderr %q, want the plan", stderr)
	}
	var parsed junitxml.Suites
	if err := xml.Unmarshal([]byte(stdout), &parsed); err != nil || len(parsed.Suites) != 1 || len(parsed.Suites[0].Cases) != 3 {
		t.Errorf("not one testcase per probe: %v %+v", err, parsed)
	}
}

func TestJSONError(t *testing.T) {
	var out strings.Builder
	if err := WriteJSONError(&out, errors.New(`the target http://127.0.0.1:1 does not answer: "refused"`)); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"error\": \"the target http://127.0.0.1:1 does not answer: \\\"refused\\\"\"\n}\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestUnknownFormat(t *testing.T) {
	if _, err := NewWriter("sarif", nil, nil, false); errText(err) != `unknown format "sarif"; want one of text, json, junit` {
		t.Errorf("NewWriter(sarif) = %v", err)
	}
}
