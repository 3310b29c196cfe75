package checks_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/fixtures"
)

// TestRulesAreIndependent holds docs/rules.md, Rules are independent, on
// every fixture set: turning any
// per-document rule off never makes a cross-document finding disappear.
// A chain rule that stayed quiet because another rule already spoke
// would turn a disabled or suppressed rule into a blind spot.
func TestRulesAreIndependent(t *testing.T) {
	cases, err := fixtures.Cases()
	if err != nil {
		t.Fatal(err)
	}
	crossDocument := func(res *checks.Result) map[string]bool {
		out := map[string]bool{}
		for _, f := range res.Findings {
			if r, ok := lint.Rules.Lookup(f.Rule); ok && r.CrossDocument() {
				out[fmt.Sprintf("%s %s:%d:%d %s", f.Rule, f.File, f.Line, f.Column, f.Message)] = true
			}
		}
		return out
	}
	checked := 0
	for _, c := range cases {
		dir := t.TempDir()
		if err := c.Materialize(dir); err != nil {
			t.Fatal(err)
		}
		all, err := checks.CheckPaths([]string{dir}, lint.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		relatedAreFindings(t, c.Dir, all.Findings)
		want := crossDocument(all)
		if len(want) == 0 {
			continue
		}
		checked++
		for _, r := range lint.Rules {
			if r.CrossDocument() || r.ID == "IDL001" {
				continue // IDL001 cannot be turned off
			}
			opts := lint.DefaultOptions()
			opts.Disabled = map[string]bool{r.ID: true}
			res, err := checks.CheckPaths([]string{dir}, opts)
			if err != nil {
				t.Fatal(err)
			}
			// A disabled rule's finding is never linked to.
			relatedAreFindings(t, c.Dir+" with "+r.ID+" off", res.Findings)
			got := crossDocument(res)
			for f := range want {
				if !got[f] {
					t.Errorf("%s: with %s off, this finding disappears: %s", c.Dir, r.ID, f)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d fixture sets have cross-document findings; the test proves little", checked)
	}
}

// relatedAreFindings checks that a related location that names another
// rule ("IDL102 reports ... too") points at a finding of that rule: the
// link between two findings must not name one that is not there.
func relatedAreFindings(t *testing.T, set string, findings []checks.Finding) {
	t.Helper()
	at := map[string]bool{}
	for _, f := range findings {
		at[fmt.Sprintf("%s %s:%d:%d", f.Rule, f.File, f.Line, f.Column)] = true
	}
	for _, f := range findings {
		for _, r := range f.Related {
			var rule string
			if _, err := fmt.Sscanf(r.Message, "%s reports", &rule); err != nil || !strings.HasPrefix(rule, "IDL") {
				continue
			}
			if !at[fmt.Sprintf("%s %s:%d:%d", rule, r.File, r.Line, r.Column)] {
				t.Errorf("%s: %s finding %q names %s at %s:%d:%d, which reports nothing there", set, f.Rule, f.Message, rule, r.File, r.Line, r.Column)
			}
		}
	}
}

// A finding overlapped by another rule's at the same place names it as a
// related location, unless that finding is suppressed: a suppressed
// finding is not linked to either.
func TestOverlapsLinkOnlyFindingsThatSurvive(t *testing.T) {
	c, err := fixtures.Lookup("rules/IDL105/bff-owner")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := c.Materialize(dir); err != nil {
		t.Fatal(err)
	}
	related := func() []string {
		t.Helper()
		res, err := checks.CheckPaths([]string{dir}, lint.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range res.Findings {
			if f.Rule == "IDL204" {
				for _, r := range f.Related {
					out = append(out, fmt.Sprintf("%s:%d:%d %s: %s", filepath.Base(r.File), r.Line, r.Column, r.Pointer, r.Message))
				}
			}
		}
		return out
	}
	want := []string{"02-bff-to-gateway.json:14:13 /http_idempotency/role: IDL105 reports this role too"}
	if got := related(); !slices.Equal(got, want) {
		t.Fatalf("IDL204's related locations %q, want %q", got, want)
	}
	path := filepath.Join(dir, "02-bff-to-gateway.json")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	suppressed := strings.Replace(string(src), "{", `{"x-idemlint-ignore": [{"rule": "IDL105", "reason": "the BFF owns keys until the migration ends"}],`, 1)
	if err := os.WriteFile(path, []byte(suppressed), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := related(); len(got) != 0 {
		t.Errorf("with IDL105 suppressed, IDL204's related locations %q, want none", got)
	}
}

// Two findings at one place are linked only when the rule says they share
// a cause: a browser edge without require_key is IDL101's finding for the
// state-changing orders.create, and IDL206's for both operations the
// adapter requires a key for, but only IDL206's orders.create finding
// names IDL101's: orders.get is no state-changing operation.
func TestOverlapsLinkOnlyTheSameCause(t *testing.T) {
	c, err := fixtures.Lookup(fixtures.Base)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := c.Materialize(dir); err != nil {
		t.Fatal(err)
	}
	edit := func(name, old, new string) {
		t.Helper()
		path := filepath.Join(dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), old) {
			t.Fatalf("%s has no %s", name, old)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(src), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("01-browser-to-bff.json", `"require_key": {"methods": ["POST", "PUT", "PATCH", "DELETE"]},`, "")
	edit("04-adapter.json", `"require_key": {"methods": ["POST", "PUT", "PATCH", "DELETE"]},`, `"require_key": {"methods": ["POST", "PUT", "PATCH", "DELETE", "GET"]},`)
	res, err := checks.CheckPaths([]string{dir}, lint.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		if f.Rule == "IDL206" {
			got = append(got, fmt.Sprintf("%s:%d:%d %s: %d related", filepath.Base(f.File), f.Line, f.Column, strings.SplitN(f.Chain, ":", 2)[0], len(f.Related)))
		}
	}
	want := []string{
		"01-browser-to-bff.json:20:23 orders.create: 1 related",
		"01-browser-to-bff.json:20:23 orders.get: 0 related",
	}
	if !slices.Equal(got, want) {
		t.Errorf("IDL206 findings %q, want %q", got, want)
	}
}

// The stages after the rules run in one order: a finding the baseline
// stage hides is not linked to either, because related locations come
// last; the baseline sees the configured severity; and new-from-rev sees
// what the baseline left, with the documents.
func TestStagesAfterTheRulesRunInOrder(t *testing.T) {
	c, err := fixtures.Lookup("rules/IDL105/bff-owner")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := c.Materialize(dir); err != nil {
		t.Fatal(err)
	}
	opts := lint.DefaultOptions()
	opts.Severity = map[string]checks.Severity{"IDL105": checks.Warning}
	var stages []string
	opts.Baseline = stageFunc(func(fs []checks.Finding, _ *checks.Result) []checks.Finding {
		for _, f := range fs {
			if f.Rule == "IDL105" {
				stages = append(stages, "baseline: IDL105 "+f.Severity.String())
			}
		}
		return slices.DeleteFunc(fs, func(f checks.Finding) bool { return f.Rule == "IDL105" })
	})
	opts.NewFromRev = stageFunc(func(fs []checks.Finding, res *checks.Result) []checks.Finding {
		stages = append(stages, fmt.Sprintf("new-from-rev: %d findings of %d documents", len(fs), len(res.Facts)))
		return fs
	})
	res, err := checks.CheckPaths([]string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"baseline: IDL105 warning", "new-from-rev: 1 findings of 4 documents"}
	if !slices.Equal(stages, want) {
		t.Errorf("stages saw %q, want %q", stages, want)
	}
	for _, f := range res.Findings {
		if f.Rule == "IDL204" && len(f.Related) > 0 {
			t.Errorf("IDL204 names %q, a finding the baseline hid", f.Related[0].Message)
		}
	}
}

// The findings a misspelt link causes name it only while it is reported:
// with IDL201 off, IDL210's orphans stand alone.
func TestTypoCauseLinksOnlyWhileReported(t *testing.T) {
	dir := fixtureSet(t, "rules/IDL201/misspelt-to-by-one-edit")
	related := func(opts checks.Options) []string {
		t.Helper()
		res, err := checks.CheckPaths([]string{dir}, opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range res.Findings {
			if f.Rule == "IDL210" {
				for _, r := range f.Related {
					out = append(out, fmt.Sprintf("%s %s:%d:%d %s", filepath.Base(f.File), filepath.Base(r.File), r.Line, r.Column, r.Pointer))
				}
			}
		}
		return out
	}
	want := []string{
		"03-gateway-to-adapter.json 02-bff-to-gateway.json:5:9 /to",
		"04-adapter.json 02-bff-to-gateway.json:5:9 /to",
	}
	if got := related(lint.DefaultOptions()); !slices.Equal(got, want) {
		t.Fatalf("IDL210's related locations %q, want %q", got, want)
	}
	opts := lint.DefaultOptions()
	opts.Disabled = map[string]bool{"IDL201": true}
	if got := related(opts); len(got) != 0 {
		t.Errorf("with IDL201 off, IDL210's related locations %q, want none", got)
	}
}

// A misspelt member folds the findings it explains only while IDL002's
// finding at it is kept: with IDL002 off they are reported as they are.
func TestTypoFoldsOnlyWhileReported(t *testing.T) {
	dir := fixtureSet(t, "rules/IDL002/misspelt-member-folds-what-it-explains")
	rules := func(opts checks.Options) []string {
		t.Helper()
		res, err := checks.CheckPaths([]string{dir}, opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range res.Findings {
			out = append(out, f.Rule)
		}
		return out
	}
	if got, want := rules(lint.DefaultOptions()), []string{"IDL002"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
	opts := lint.DefaultOptions()
	opts.Disabled = map[string]bool{"IDL002": true}
	if got, want := rules(opts), []string{"IDL102", "IDL202", "IDL214", "IDL214"}; !slices.Equal(got, want) {
		t.Errorf("with IDL002 off, findings %q, want %q", got, want)
	}
}
