package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/report/junitxml"
)

// largeReport is a report of n findings over a few hundred files, with
// what escaping and grouping must get right: HTML and control characters,
// non-ASCII text, chains, related locations, files without findings, a
// rule missing from Rules and repeated identities.
func largeReport(n int) *Report {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	r := &Report{Version: "v9", Rules: sampleRules, FailOn: checks.Warning}
	texts := []string{`<a href="x">&amp;</a>`, "tab\there", "ünïcödé → chain", "line\nbreak", `quote " and \ back`, "plain"}
	rules := []string{"IDL001", "IDL102", "IDL208", "IDL999"}
	for i := range n {
		file := fmt.Sprintf("set-%03d/doc %d.json", rng.IntN(300), rng.IntN(3))
		f := checks.Finding{
			Rule: rules[rng.IntN(len(rules))], Severity: checks.Severity(1 + rng.IntN(2)), File: file,
			Line: rng.IntN(5), Column: 1 + rng.IntN(3), Pointer: "/p/" + strconv.Itoa(rng.IntN(4)),
			Message: texts[rng.IntN(len(texts))] + " " + strconv.Itoa(i%7),
		}
		if rng.IntN(3) == 0 {
			f.Chain = "orders.create: web -> " + texts[rng.IntN(len(texts))]
		}
		for range rng.IntN(3) {
			f.Related = append(f.Related, checks.Location{File: "rel/" + texts[rng.IntN(len(texts))], Line: 1 + rng.IntN(9), Column: 2, Pointer: "/x", Message: texts[rng.IntN(len(texts))]})
		}
		r.Findings = append(r.Findings, f)
	}
	checks.SortFindings(r.Findings)
	for i := range 50 {
		r.Paths = append(r.Paths, fmt.Sprintf("set-%03d/doc %d.json", i*7, i%3))
	}
	r.Files = len(r.Paths)
	return r
}

// The streamed formats write the bytes the whole-document encoders of
// encoding/json and encoding/xml write for the same report.
func TestStreamedFormatsMatchWholeDocuments(t *testing.T) {
	for _, n := range []int{0, 1, 2000} {
		r := largeReport(n)
		for name, whole := range map[string]func(*Report) []byte{
			"json": wholeJSON, "sarif": wholeSARIF, "junit": wholeJUnit,
		} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				f, err := New(name, Options{})
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if err := f.Format(&got, r); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(whole(r)), got.String()); diff != "" {
					t.Errorf("streamed %s differs from the whole document (-whole +streamed):\n%s", name, diff)
				}
			})
		}
	}
}

// A report whose findings are not sorted by file still lists each in its
// file's suite.
func TestJUnitGroupsUnsortedFindings(t *testing.T) {
	r := largeReport(300)
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(r.Findings), func(i, j int) { r.Findings[i], r.Findings[j] = r.Findings[j], r.Findings[i] })
	var got bytes.Buffer
	if err := (JUnit{}).Format(&got, r); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(wholeJUnit(r)), got.String()); diff != "" {
		t.Errorf("(-whole +streamed):\n%s", diff)
	}
}

func encodeWhole(t any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func wholeJSON(r *Report) []byte {
	findings := r.Findings
	if findings == nil {
		findings = []checks.Finding{}
	}
	sum := jsonSummary{Files: r.Files, Unreadable: r.Unreadable, NotBoundary: r.NotBoundary}
	sum.Errors, sum.Warnings = checks.Count(r.Findings)
	return encodeWhole(struct {
		Findings []checks.Finding `json:"findings"`
		Summary  jsonSummary      `json:"summary"`
	}{findings, sum})
}

func wholeSARIF(r *Report) []byte {
	type run struct {
		Tool       sarifTool      `json:"tool"`
		ColumnKind string         `json:"columnKind"`
		Results    []*sarifResult `json:"results"`
	}
	out := run{Tool: sarifTool{Driver: sarifDriver{Name: "idemlint", InformationURI: InformationURI, Version: r.Version, Rules: []sarifRule{}}}, ColumnKind: "unicodeCodePoints", Results: []*sarifResult{}}
	index := map[string]int{}
	for i, rule := range r.Rules {
		index[rule.ID] = i
		out.Tool.Driver.Rules = append(out.Tool.Driver.Rules, sarifRuleOf(rule))
	}
	seen := map[string]int{} // across the whole log, as before the stream
	for i := range r.Findings {
		out.Results = append(out.Results, sarifResultOf(&r.Findings[i], index, seen))
	}
	return encodeWhole(struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []run  `json:"runs"`
	}{sarifSchemaURI, sarifVersion, []run{out}})
}

func wholeJUnit(r *Report) []byte {
	failOn := r.FailOn
	if failOn == 0 {
		failOn = checks.Error
	}
	byFile := map[string][]checks.Finding{}
	files := slices.Clone(r.Paths)
	for _, f := range r.Findings {
		byFile[f.File] = append(byFile[f.File], f)
		files = append(files, f.File)
	}
	slices.Sort(files)
	files = slices.Compact(files)
	out := junitxml.Suites{Name: "idemlint"}
	for _, file := range files {
		s := junitxml.Suite{Name: file}
		for _, f := range byFile[file] {
			c := junitxml.Case{ClassName: file, Name: f.Rule + " " + pointerName(f.Pointer)}
			if f.Severity >= failOn {
				c.Failure = &junitxml.Failure{Message: f.Message, Type: f.Severity.String(), Text: textLine(f)}
				s.Failures++
			} else {
				c.SystemOut = textLine(f)
			}
			s.Cases = append(s.Cases, c)
		}
		if len(s.Cases) == 0 {
			s.Cases = []junitxml.Case{{ClassName: file, Name: passingCase}}
		}
		s.Tests = len(s.Cases)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, s)
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
	b.WriteString("\n")
	return b.Bytes()
}
