package lint

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/config"
	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/fixtures"
)

// set writes the fixture set dir ("rules/IDL112/key-not-logged") to a
// new directory and returns it.
func set(t *testing.T, dir string) string {
	t.Helper()
	c, err := fixtures.Lookup(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "set")
	if err := c.Materialize(out); err != nil {
		t.Fatal(err)
	}
	return out
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ids are the rule ids of findings, in order.
func ids(findings []checks.Finding) []string {
	var out []string
	for _, f := range findings {
		out = append(out, f.Rule)
	}
	return out
}

func TestOptionsMergesFileAndFlags(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, config.FileName), `{"rules": {"IDL112": "off"}, "max_retry_amplification": 4}`)
	six := 6
	opts, cfg, err := Options(root, Settings{Flags: config.Flags{MaxRetryAmplification: &six}})
	if err != nil || cfg == nil || !opts.Disabled["IDL112"] || opts.Limits.MaxRetryAmplification != 6 {
		t.Errorf("Options = %v, %v, %d; want IDL112 off from the file, the limit 6 from the flag", err, opts.Disabled, opts.Limits.MaxRetryAmplification)
	}
	if _, cfg, err := Options(root, Settings{NoConfig: true}); err != nil || cfg != nil {
		t.Errorf("Options with NoConfig = %v, %v; want no configuration", cfg, err)
	}
	if _, _, err := Options(root, Settings{ConfigPath: filepath.Join(root, "missing.json")}); err == nil {
		t.Error("Options with a --config that does not exist: no error")
	}
}

func TestCheckRefusesConflictingSettings(t *testing.T) {
	dir := set(t, "valid/orders-basic")
	for _, tc := range []struct {
		paths []string
		s     Settings
		want  string
	}{
		{[]string{"-", dir}, Settings{}, `"-" (standard input) must be the only PATH`},
		{[]string{dir}, Settings{StdinName: "a.json"}, `--stdin-filename needs "-" as the PATH`},
		{[]string{dir}, Settings{Baseline: "b.json", WriteBaseline: "b.json"}, "--baseline and --write-baseline: give one (--write-baseline records the findings a later --baseline hides)"},
		{[]string{dir}, Settings{Flags: config.Flags{Mesh: "linkerd"}}, `--mesh: the mesh must be none or istio, got "linkerd"`},
	} {
		if _, err := Run(tc.paths, tc.s); err == nil || err.Error() != tc.want {
			t.Errorf("Run(%q, %+v) = %v, want %s", tc.paths, tc.s, err, tc.want)
		}
	}
}

// A run that finds no boundary document is a usage error, unless
// AllowEmpty; on standard input, it says so in its own words.
func TestCheckWithoutDocuments(t *testing.T) {
	empty := t.TempDir()
	_, err := Run([]string{empty}, Settings{NoConfig: true})
	if want := NoDocumentsError([]string{empty}); err == nil || err.Error() != want.Error() {
		t.Errorf("Run(empty) = %v, want %v", err, want)
	}
	if run, err := Run([]string{empty}, Settings{NoConfig: true, AllowEmpty: true}); err != nil || run.Failed() {
		t.Errorf("Run(empty) with AllowEmpty = %v; want a passing run", err)
	}
	_, err = Run([]string{"-"}, Settings{NoConfig: true, Stdin: strings.NewReader(`{"name": "not a boundary"}`)})
	if want := "standard input is not a boundary document (a JSON object with spec_version or boundary)"; err == nil || err.Error() != want {
		t.Errorf("Run(-) of a non-boundary object = %v, want %s", err, want)
	}
}

// The document on standard input is checked as StdinName, with the
// configuration that applies there, and returned for the snippets.
func TestCheckStdin(t *testing.T) {
	dir := set(t, "rules/IDL112/key-not-logged")
	name := filepath.Join(dir, "04-adapter.json")
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	run, err := Run([]string{"-"}, Settings{Stdin: bytes.NewReader(src), StdinName: name})
	if err != nil {
		t.Fatal(err)
	}
	// Alone, the policy is reached by no chain (IDL210).
	if got := ids(run.Findings); !cmp.Equal(got, []string{"IDL210", "IDL112"}) || run.Findings[1].File != name || !bytes.Equal(run.Stdin, src) {
		t.Errorf("Run(-) = %v in %s; want IDL210 and IDL112 in %s, and the document back", got, run.Findings[1].File, name)
	}
	write(t, filepath.Join(dir, config.FileName), `{"rules": {"IDL112": "off"}}`)
	if run, err := Run([]string{"-"}, Settings{Stdin: bytes.NewReader(src), StdinName: name}); err != nil || !cmp.Equal(ids(run.Findings), []string{"IDL210"}) {
		t.Errorf("Run(-) under a configuration that turns IDL112 off = %v, %v; want IDL210 alone", err, run.Findings)
	}
}

// --write-baseline records what --baseline then hides, and both say what
// they did on the notes.
func TestCheckBaselineRoundTrip(t *testing.T) {
	dir := set(t, "rules/IDL110/mismatch-status-200")
	base := filepath.Join(t.TempDir(), "baseline.json")
	var notes strings.Builder
	run, err := Run([]string{dir}, Settings{WriteBaseline: base, Notes: &notes})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Findings) != 0 || run.Failed() {
		t.Errorf("--write-baseline reported %v, want every finding recorded and hidden", ids(run.Findings))
	}
	wantNotes := "idemlint: recorded 1 finding in baseline " + base + "\nidemlint: baseline " + base + " hid 1 finding\n"
	if notes.String() != wantNotes {
		t.Errorf("notes = %q, want %q", notes.String(), wantNotes)
	}
	plain, err := Run([]string{dir}, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(plain.Findings); !cmp.Equal(got, []string{"IDL110"}) || !plain.Failed() {
		t.Errorf("without a baseline: %v, failed %v; want the IDL110 error failing the run", got, plain.Failed())
	}
	notes.Reset()
	hidden, err := Run([]string{dir}, Settings{Baseline: base, Notes: &notes})
	if err != nil || len(hidden.Findings) != 0 || hidden.Failed() {
		t.Errorf("with the baseline: %v, %v; want nothing", err, hidden.Findings)
	}
	if want := "idemlint: baseline " + base + " hid 1 finding\n"; notes.String() != want {
		t.Errorf("notes = %q, want %q", notes.String(), want)
	}
}

// The verdict follows FailOn and MaxWarnings, and Failed says when too
// many warnings fail the run.
func TestCheckVerdict(t *testing.T) {
	dir := set(t, "rules/IDL112/key-not-logged")
	zero := 0
	for _, tc := range []struct {
		s     Settings
		fail  bool
		notes string
	}{
		{Settings{}, false, ""},
		{Settings{FailOn: checks.Warning}, true, ""},
		{Settings{MaxWarnings: &zero}, true, "idemlint: too many warnings: 1, --max-warnings is 0\n"},
	} {
		var notes strings.Builder
		tc.s.Notes = &notes
		run, err := Run([]string{dir}, tc.s)
		if err != nil {
			t.Fatal(err)
		}
		if got := run.Failed(); got != tc.fail || notes.String() != tc.notes {
			t.Errorf("%+v: failed %v, notes %q; want %v, %q", tc.s, got, notes.String(), tc.fail, tc.notes)
		}
	}
}

// The configuration's "ignore" leaving out a named path is said, and
// Verbose says which rules did not run.
func TestCheckNotes(t *testing.T) {
	dir := set(t, "valid/orders-basic")
	write(t, filepath.Join(dir, config.FileName), `{"ignore": ["01-browser-to-bff.json"]}`)
	named := filepath.Join(dir, "01-browser-to-bff.json")
	var notes strings.Builder
	if _, err := Run([]string{dir, named}, Settings{Notes: &notes, Verbose: true}); err != nil {
		t.Fatal(err)
	}
	ignored := "idemlint: " + named + " is ignored by " + filepath.Join(dir, config.FileName) + ` ("ignore"), so it is not checked; --no-config checks it`
	if !strings.Contains(notes.String(), ignored+"\n") || !strings.Contains(notes.String(), "IDL301") {
		t.Errorf("notes = %q; want %q and the OpenAPI rules not run", notes.String(), ignored)
	}
}

func TestGraphs(t *testing.T) {
	dir := set(t, "valid/orders-basic")
	graphs, err := Graphs([]string{dir}, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(graphs) != 1 || len(graphs[0].Graph.Chains) == 0 || graphs[0].HopNote != nil {
		t.Fatalf("Graphs = %+v; want one set with chains and no as-built notes", graphs)
	}
	for _, c := range graphs[0].Graph.Chains {
		if len(c.Hops) != 4 {
			t.Errorf("chain %s has %d hops, want the set's four documents", c.Name(), len(c.Hops))
		}
	}
	// A mesh alone is an as-built configuration: the hops it carries are
	// noted with its default retry.
	meshed, err := Graphs([]string{dir}, Settings{Flags: config.Flags{Mesh: "istio"}})
	if err != nil {
		t.Fatal(err)
	}
	c := meshed[0].Graph.Chains[0]
	if note := meshed[0].HopNote; note == nil || !strings.HasPrefix(note(c, 1), "mesh istio ") {
		t.Errorf("under mesh istio, the BFF -> gateway hop is not noted with the mesh's retry")
	}
	empty := t.TempDir()
	if _, err := Graphs([]string{empty}, Settings{}); err == nil || err.Error() != NoDocumentsError([]string{empty}).Error() {
		t.Errorf("Graphs(empty) = %v, want the no-documents error", err)
	}
}

// WriteGraphs draws in the format asked for, and refuses an unknown one
// before reading any path.
func TestWriteGraphs(t *testing.T) {
	dir := set(t, "valid/orders-basic")
	var out strings.Builder
	if err := WriteGraphs(&out, []string{dir}, "mermaid", Settings{}); err != nil || !strings.HasPrefix(out.String(), "flowchart ") {
		t.Errorf("WriteGraphs mermaid = %v, %q; want a flowchart", err, out.String())
	}
	out.Reset()
	err := WriteGraphs(&out, []string{filepath.Join(dir, "missing")}, "svg", Settings{})
	if want := `unknown format "svg" (want text, mermaid, dot)`; err == nil || err.Error() != want || out.Len() != 0 {
		t.Errorf("WriteGraphs svg = %v, %q; want %s and nothing written", err, out.String(), want)
	}
}

// The report fails on errors unless told otherwise, and counts the OpenAPI
// description among the files.
func TestReport(t *testing.T) {
	dir, spec := setWithSpec(t)
	api, err := openapi.Load(filepath.Join(dir, spec))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Run([]string{dir}, Settings{NoConfig: true})
	if err != nil {
		t.Fatal(err)
	}
	rep := plain.Report("v1")
	if rep.FailOn != checks.Error || rep.Version != "v1" || rep.Files != plain.Files || slices.Contains(rep.Paths, api.Path) {
		t.Errorf("report without a description: fail-on %v, version %q, %d files of %d, paths %v", rep.FailOn, rep.Version, rep.Files, plain.Files, rep.Paths)
	}
	held, err := Run([]string{dir}, Settings{NoConfig: true, API: api, FailOn: checks.Warning})
	if err != nil {
		t.Fatal(err)
	}
	rep = held.Report("v1")
	if rep.FailOn != checks.Warning || rep.Files != held.Files+1 || rep.Paths[len(rep.Paths)-1] != api.Path {
		t.Errorf("report held to %s: fail-on %v, %d files of %d, paths %v", api.Path, rep.FailOn, rep.Files, held.Files, rep.Paths)
	}
}

// setWithSpec writes the first fixture set holding an OpenAPI description
// into a new directory, returning it and the description's path in it.
func setWithSpec(t *testing.T) (dir, spec string) {
	t.Helper()
	cases, err := fixtures.Cases()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(cases, func(c fixtures.Case) bool { return c.Spec != "" })
	if i < 0 {
		t.Fatal("no fixture set has an OpenAPI description")
	}
	dir = filepath.Join(t.TempDir(), "set")
	if err := cases[i].Materialize(dir); err != nil {
		t.Fatal(err)
	}
	return dir, cases[i].Spec
}
