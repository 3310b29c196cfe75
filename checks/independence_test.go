package checks_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/fixtures"
)

// TestRulesAreIndependent holds spec 6.1 on every fixture set: turning any
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
			if r, ok := checks.Lookup(f.Rule); ok && r.CrossDocument() {
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
		all, err := checks.Check([]string{dir}, checks.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		relatedAreFindings(t, c.Dir, all.Findings)
		want := crossDocument(all)
		if len(want) == 0 {
			continue
		}
		checked++
		for _, r := range checks.Rules() {
			if r.CrossDocument() || r.ID == "IDL001" {
				continue // IDL001 cannot be turned off
			}
			opts := checks.DefaultOptions()
			opts.Disabled = map[string]bool{r.ID: true}
			res, err := checks.Check([]string{dir}, opts)
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
		res, err := checks.Check([]string{dir}, checks.DefaultOptions())
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
