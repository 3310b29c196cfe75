package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/report/junitxml"
	"github.com/idemlint/idemlint/fixtures"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files from the current output")

// sampleRules are fixed rules, so the goldens do not follow the real rules'
// documentation: one per-document rule whose Doc holds an indented example
// (a code block in SARIF's Markdown) and one cross-document rule.
var sampleRules = []*checks.Rule{
	{
		ID: "IDL102", Name: "key-header-allowlisted", Severity: checks.Error,
		Summary: "the key header is allowed at every hop",
		Doc: "A header not on an allowlist is dropped.\n\nFix: add it:\n" +
			`  "header_to_allow_inbound": ["x-idempotency-key"]` + "\nthen check again.",
		CheckDocument: func(*checks.DocumentPass) {},
	},
	{
		ID: "IDL208", Name: "retry-amplification", Severity: checks.Warning,
		Summary:  "retries multiply along a chain",
		Doc:      "Each hop's retries multiply: 3 x 3 = 9 attempts.",
		CheckSet: func(*checks.SetPass) {},
	},
}

// sampleReport exercises what formats must get right: escaping (a space,
// ":", "," and "%" in names and messages), an absolute path, a finding
// without a position, a chain, both severities, a file with no findings,
// a related location, and a finding of a rule missing from Rules.
func sampleReport() *Report {
	return &Report{
		Version: "v1.2.3",
		Rules:   sampleRules,
		Files:   4,
		Paths:   []string{"set/01 browser.json", "set/02,gw:v2.json", "set/03-clean.json", "/srv/set/04-adapter.json"},
		Findings: []checks.Finding{
			{Rule: "IDL001", Severity: checks.Error, File: "/srv/set/04-adapter.json", Message: "cannot read file: permission denied"},
			{Rule: "IDL102", Severity: checks.Error, File: "set/01 browser.json", Line: 18, Column: 27, Pointer: "/cors_allowed_headers",
				Message: `add "x-idempotency-key" to cors_allowed_headers`},
			{Rule: "IDL102", Severity: checks.Error, File: "set/02,gw:v2.json", Line: 1, Column: 1, Pointer: "",
				Message: "100% of requests lose the key: add it, then retry"},
			{Rule: "IDL208", Severity: checks.Warning, File: "set/02,gw:v2.json", Line: 20, Column: 20, Pointer: "/http_retry/max_attempts",
				Chain:   "orders.create: web -> checkout-bff -> edge-gw -> orders-adapter",
				Message: "orders.create: web -> checkout-bff -> edge-gw -> orders-adapter: 12 attempts exceed 10",
				Related: []checks.Location{{File: "set/01 browser.json", Line: 18, Column: 27, Pointer: "/http_retry/max_attempts", Message: "IDL102 reports this list too"}}},
		},
	}
}

func TestFormatsGolden(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			f, err := New(name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := f.Format(&buf, sampleReport()); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("%s output differs from %s (-want +got):\n%s", name, golden, diff)
			}
		})
	}
}

// TestFormatsOfAnEmptyReport: no findings is still well-formed output, with
// empty lists rather than nulls.
func TestFormatsOfAnEmptyReport(t *testing.T) {
	want := map[string]string{
		"text":   "0 files checked, 0 errors, 0 warnings\n",
		"github": "0 files checked, 0 errors, 0 warnings\n",
		"markdown": "### idemlint\n\n| files checked | errors | warnings | unreadable | skipped: not boundary documents |\n" +
			"|---:|---:|---:|---:|---:|\n| 0 | 0 | 0 | 0 | 0 |\n",
		"json":  "{\n  \"findings\": [],\n  \"summary\": {\n    \"files\": 0,\n    \"errors\": 0,\n    \"warnings\": 0,\n    \"unreadable\": 0,\n    \"not_boundary\": 0\n  }\n}\n",
		"junit": xml.Header + `<testsuites name="idemlint" tests="0" failures="0" errors="0"></testsuites>` + "\n",
		"sarif": `{
  "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
  "version": "2.1.0",
  "runs": [
    {
      "tool": {
        "driver": {
          "name": "idemlint",
          "informationUri": "https://github.com/idemlint/idemlint",
          "rules": []
        }
      },
      "columnKind": "unicodeCodePoints",
      "results": []
    }
  ]
}
`,
	}
	for _, name := range Names() {
		f, _ := New(name, Options{})
		var buf bytes.Buffer
		if err := f.Format(&buf, &Report{}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[name], buf.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// sarifSchema compiles the official SARIF 2.1.0 schema (a copy in testdata,
// so the test needs no network), asserting formats such as uri-reference.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	const path = "testdata/sarif-schema-2.1.0.json"
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(path, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func validateSARIF(t *testing.T, sch *jsonschema.Schema, out []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("SARIF output is not JSON: %v", err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("SARIF output does not match the SARIF 2.1.0 schema: %v", err)
	}
}

// TestSARIFMatchesTheSchema validates the sample, and the output for a real
// fixture set with every core rule's metadata.
func TestSARIFMatchesTheSchema(t *testing.T) {
	sch := sarifSchema(t)
	var buf bytes.Buffer
	if err := (SARIF{}).Format(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	validateSARIF(t, sch, buf.Bytes())

	cases, err := fixtures.Cases()
	if err != nil {
		t.Fatal(err)
	}
	sets := t.TempDir()
	for _, c := range cases {
		if c.Rule == "IDL003" {
			if err := c.Materialize(filepath.Join(sets, c.Name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := checks.CheckPaths([]string{sets}, checks.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) == 0 {
		t.Fatal("the fixture set has no findings to validate")
	}
	buf.Reset()
	if err := (SARIF{}).Format(&buf, &Report{Findings: res.Findings, Files: res.Files, Rules: checks.Core, Version: "(devel)"}); err != nil {
		t.Fatal(err)
	}
	validateSARIF(t, sch, buf.Bytes())
}

// TestSARIFFingerprintsIgnoreLines: moving a finding keeps its identity;
// another pointer changes it.
func TestSARIFFingerprintsIgnoreLines(t *testing.T) {
	fingerprint := func(f checks.Finding) string {
		var buf bytes.Buffer
		if err := (SARIF{}).Format(&buf, &Report{Findings: []checks.Finding{f}}); err != nil {
			t.Fatal(err)
		}
		var log struct {
			Runs []struct {
				Results []struct {
					PartialFingerprints map[string]string `json:"partialFingerprints"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
			t.Fatal(err)
		}
		return log.Runs[0].Results[0].PartialFingerprints[fingerprintKey]
	}
	f := checks.Finding{Rule: "IDL102", Severity: checks.Error, File: "a.json", Line: 3, Column: 5, Pointer: "/x", Message: "m"}
	moved := f
	moved.Line, moved.Column = 30, 7
	other := f
	other.Pointer = "/y"
	if fingerprint(f) != fingerprint(moved) {
		t.Error("a finding that only moved changed its fingerprint")
	}
	if fingerprint(f) == fingerprint(other) {
		t.Error("findings at different pointers share a fingerprint")
	}
}

// TestJUnitFollowsFailOn: with --fail-on warning, warnings are failures.
func TestJUnitFollowsFailOn(t *testing.T) {
	failures := func(failOn checks.Severity) int {
		r := sampleReport()
		r.FailOn = failOn
		var buf bytes.Buffer
		if err := (JUnit{}).Format(&buf, r); err != nil {
			t.Fatal(err)
		}
		var out junitxml.Suites
		if err := xml.Unmarshal(buf.Bytes(), &out); err != nil {
			t.Fatalf("JUnit output is not XML: %v", err)
		}
		return out.Failures
	}
	if got := failures(0); got != 3 {
		t.Errorf("default: %d failures, want 3 (the errors)", got)
	}
	if got := failures(checks.Warning); got != 4 {
		t.Errorf("--fail-on warning: %d failures, want 4 (every finding)", got)
	}
}

func TestGitHubEscaping(t *testing.T) {
	for in, want := range map[string]string{
		"plain":          "plain",
		"100%":           "100%25",
		"a\r\nb":         "a%0D%0Ab",
		"k: v, w":        "k: v, w",
		"%0A stays text": "%250A stays text",
	} {
		if got := escapeData(in); got != want {
			t.Errorf("escapeData(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := escapeProperty("dir,x/a:b%\n.json"), "dir%2Cx/a%3Ab%25%0A.json"; got != want {
		t.Errorf("escapeProperty = %q, want %q", got, want)
	}
}

// TestTextQuotesControlCharactersInNames: a file name is the one part of a
// text finding line an attacker writes freely (a pull request can add any
// file); a newline in it must not start a forged finding line.
func TestTextQuotesControlCharactersInNames(t *testing.T) {
	forged := "a.json:1:1: error IDL102 forged\nb.json"
	r := &Report{Files: 1, Findings: []checks.Finding{{
		Rule: "IDL001", Severity: checks.Error, File: forged, Line: 2, Column: 3, Message: "not JSON",
		Related: []checks.Location{{File: "c\x1b[2J.json", Line: 1, Column: 1, Message: "see"}},
	}}}
	var out bytes.Buffer
	if err := (Text{}).Format(&out, r); err != nil {
		t.Fatal(err)
	}
	want := `"a.json:1:1: error IDL102 forged\nb.json":2:3: error IDL001 not JSON
    related "c\x1b[2J.json":1:1: see
1 file checked, 1 error, 0 warnings
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("text output (-want +got):\n%s", diff)
	}
}

// TestMarkdownKeepsEachFindingInItsRow: a "|" or a newline in a message
// cannot break the table, and the table stops at maxMarkdownRows with the
// number left out.
func TestMarkdownKeepsEachFindingInItsRow(t *testing.T) {
	r := &Report{Files: 1}
	for range maxMarkdownRows + 2 {
		r.Findings = append(r.Findings, checks.Finding{Rule: "IDL102", Severity: checks.Error, File: "a|b.json", Line: 1, Column: 2,
			Message: "one | two\nthree <b>"})
	}
	var buf bytes.Buffer
	if err := (Markdown{}).Format(&buf, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	rows := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "| error |") {
			rows++
			if want := "| error | IDL102 | `a\\|b.json:1:2` | one \\| two three &lt;b> |"; l != want {
				t.Fatalf("row %q, want %q", l, want)
			}
		}
	}
	if last := lines[len(lines)-1]; rows != maxMarkdownRows || !strings.HasPrefix(last, "2 more findings not shown") {
		t.Errorf("%d rows, last line %q; want %d rows, then the 2 left out", rows, last, maxMarkdownRows)
	}
}
