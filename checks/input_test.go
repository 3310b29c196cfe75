package checks

import (
	"errors"
	"fmt"
	"github.com/idemlint/idemlint/checks/chain"
	"slices"
	"strings"
	"testing"
)

// testSets are two sets of one and two documents, enough for inputs to
// tell the sets apart.
func testSets() [][]*chain.Facts {
	return [][]*chain.Facts{
		{{Path: "a/1.json"}},
		{{Path: "b/1.json"}, {Path: "b/2.json"}},
	}
}

// Each input is built once per set (or run) however many rules require
// it, and each rule sees the value of its own set; a rule run across sets
// sees every document and a run-wide input made from the per-set ones.
func TestInputsAreBuiltOncePerSetOrRun(t *testing.T) {
	var perSetBuilds, perRunBuilds int
	docs := &InputOf[int]{Name: "document count", PerSet: true, Build: func(p *InputPass) (int, error) {
		perSetBuilds++
		return len(p.Docs), nil
	}}
	total := &InputOf[int]{Name: "total", Build: func(p *InputPass) (int, error) {
		perRunBuilds++
		counts, err := docs.EachSet(p)
		if err != nil {
			return 0, err
		}
		n := 0
		for _, c := range counts {
			n += c
		}
		return n, nil
	}}
	var seen []string
	see := func(p *SetPass) {
		seen = append(seen, fmt.Sprintf("%s %d docs, count %d", p.Rule.ID, len(p.Docs), docs.Of(p)))
	}
	rules := []*Rule{
		{ID: "T1", CheckSet: see, Requires: []Input{docs}},
		{ID: "T2", CheckSet: see, Requires: []Input{docs}},
		{ID: "T3", AcrossSets: true, Requires: []Input{total}, CheckSet: func(p *SetPass) {
			seen = append(seen, fmt.Sprintf("%s %d docs, total %d", p.Rule.ID, len(p.Docs), total.Of(p)))
		}},
	}
	opts := DefaultOptions()
	_, _, notRun := checkSets(rules, testSets(), []int{0, 0}, &opts)
	want := []string{"T1 1 docs, count 1", "T2 1 docs, count 1", "T1 2 docs, count 2", "T2 2 docs, count 2", "T3 3 docs, total 3"}
	if !slices.Equal(seen, want) {
		t.Errorf("rules saw %q, want %q", seen, want)
	}
	if perSetBuilds != 2 || perRunBuilds != 1 {
		t.Errorf("built the per-set input %d times (want 2, once per set), the run-wide one %d times (want 1)", perSetBuilds, perRunBuilds)
	}
	if len(notRun) != 0 {
		t.Errorf("not run: %v", notRun)
	}
}

// A rule whose input is not supplied, or cannot be built, does not run
// and is reported as not run, with why; the others run.
func TestRulesWithoutTheirInputDoNotRun(t *testing.T) {
	described := &InputOf[string]{Name: "description", Missing: "give one with --spec"}
	broken := &InputOf[int]{Name: "broken input", PerSet: true, Build: func(*InputPass) (int, error) {
		return 0, errors.New("cannot read it")
	}}
	var ran []string
	run := func(p *SetPass) { ran = append(ran, p.Rule.ID) }
	rules := []*Rule{
		{ID: "T1", CheckSet: run, Requires: []Input{described}, AcrossSets: true},
		{ID: "T2", CheckSet: run, Requires: []Input{broken}},
		{ID: "T3", CheckSet: run},
	}
	opts := DefaultOptions()
	_, _, notRun := checkSets(rules, testSets(), []int{0, 0}, &opts)
	if !slices.Equal(ran, []string{"T3", "T3"}) {
		t.Errorf("ran %q, want T3 once per set", ran)
	}
	want := []NotRun{{"T1", "no description: give one with --spec"}, {"T2", "cannot read it"}}
	if !slices.Equal(notRun, want) {
		t.Errorf("not run %v, want %v", notRun, want)
	}

	ran = nil
	opts.Inputs = append(opts.Inputs, described.Supply("api.yaml"))
	if _, _, notRun = checkSets(rules[:1], testSets(), []int{0, 0}, &opts); len(notRun) != 0 || !slices.Equal(ran, []string{"T1"}) {
		t.Errorf("with the description supplied: ran %q, not run %v; want T1 run", ran, notRun)
	}
}

// A rule reads only the inputs it requires, as with go/analysis.
func TestReadingAnInputNotRequiredPanics(t *testing.T) {
	other := &InputOf[int]{Name: "other input", PerSet: true, Build: func(*InputPass) (int, error) { return 1, nil }}
	rules := []*Rule{{ID: "T1", CheckSet: func(p *SetPass) { other.Of(p) }}}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "T1 reads the other input it does not require") {
			t.Errorf("recovered %v, want the rule and the input named", r)
		}
	}()
	opts := DefaultOptions()
	checkSets(rules, testSets(), []int{0, 0}, &opts)
}

// A run refuses a list of rules its caller composed wrongly, naming the
// rule: two rules of one id, or a rule that does not say how it runs.
func TestARunRefusesAMisdeclaredRuleList(t *testing.T) {
	perSet := &InputOf[int]{Name: "per-set input", PerSet: true}
	for _, tc := range []struct {
		rules Rules
		want  string
	}{
		{append(Rules{{ID: "IDL101"}}, Core...), "rule IDL101 listed twice"},
		{Rules{{ID: "T1", CheckDocument: func(*DocumentPass) {}, CheckSet: func(*SetPass) {}}}, "rule T1 is both per-document and cross-document"},
		{Rules{{ID: "T2", AcrossSets: true}}, "rule T2 requires inputs or runs across sets but is no cross-document rule"},
		{Rules{{ID: "T3", AcrossSets: true, Requires: []Input{perSet}, CheckSet: func(*SetPass) {}}}, "rule T3 runs across sets but requires the per-set per-set input"},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("recovered %v, want %q", r, tc.want)
				}
			}()
			opts := DefaultOptions()
			opts.Rules = tc.rules
			CheckFiles(nil, opts)
		}()
	}
	if err := Core.validate(); err != nil {
		t.Errorf("the core rules: %v", err)
	}
}

// An input built from one the caller supplies (as the as-built hops are
// from the configuration's as_built paths) is built once, and is missing,
// with the supplied one's reason, when that one was not given.
func TestAnInputBuiltFromASuppliedOne(t *testing.T) {
	paths := &InputOf[[]string]{Name: "as_built paths", Missing: `list them under "as_built" in the configuration`}
	builds := 0
	hops := &InputOf[int]{Name: "as-built hops", Scope: "as-built", Build: func(p *InputPass) (int, error) {
		builds++
		ps, err := paths.From(p)
		return len(ps), err
	}}
	var seen []string
	rule := &Rule{ID: "T1", Requires: []Input{ChainGraph, hops}, CheckSet: func(p *SetPass) {
		seen = append(seen, fmt.Sprintf("%d hops, %d chains", hops.Of(p), len(ChainGraph.Of(p).Chains)))
	}}
	if rule.Scope() != "as-built" {
		t.Errorf("scope %q, want the input's, as-built", rule.Scope())
	}
	opts := DefaultOptions()
	_, _, notRun := checkSets([]*Rule{rule}, testSets(), []int{0, 0}, &opts)
	want := []NotRun{{"T1", `no as_built paths: list them under "as_built" in the configuration`}}
	if len(seen) != 0 || !slices.Equal(notRun, want) {
		t.Errorf("without the paths: ran %q, not run %v; want not run %v", seen, notRun, want)
	}
	opts.Inputs = append(opts.Inputs, paths.Supply([]string{"deploy/a.yaml", "deploy/b.yaml"}))
	builds = 0
	if _, _, notRun = checkSets([]*Rule{rule}, testSets(), []int{0, 0}, &opts); len(notRun) != 0 {
		t.Fatalf("with the paths: not run %v", notRun)
	}
	if !slices.Equal(seen, []string{"2 hops, 0 chains", "2 hops, 0 chains"}) || builds != 1 {
		t.Errorf("with the paths: ran %q with %d builds; want both sets with one build", seen, builds)
	}
}

// A run-wide input is built for no set even when a per-set rule asks for
// it first: reading a per-set input with From there would silently take
// that set's value, so it panics, pointing at EachSet.
func TestARunWideInputReadsNoSetsValue(t *testing.T) {
	perSet := &InputOf[int]{Name: "per-set count", PerSet: true, Build: func(p *InputPass) (int, error) { return len(p.Docs), nil }}
	runWide := &InputOf[int]{Name: "run-wide count", Build: func(p *InputPass) (int, error) { return perSet.From(p) }}
	rules := []*Rule{{ID: "T1", Requires: []Input{runWide}, CheckSet: func(*SetPass) {}}}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "EachSet") {
			t.Errorf("recovered %v, want a pointer to EachSet", r)
		}
	}()
	opts := DefaultOptions()
	checkSets(rules, testSets(), []int{0, 0}, &opts)
}
