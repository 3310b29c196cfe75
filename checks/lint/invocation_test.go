package lint

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/checks"
)

// givenFlags is an Invocation's Given for the flags named.
func givenFlags(names ...string) func(string) bool {
	return func(name string) bool {
		for _, n := range names {
			if n == name {
				return true
			}
		}
		return false
	}
}

// leaveCollector keeps Execute from deferring the test process's first
// collection (TestDeferFirstCollection* needs the collector as it found
// it): a collector set from outside is left alone.
func leaveCollector(t *testing.T) { t.Setenv("GOGC", "100") }

// The flags whose value needs reading become settings: a severity by
// name, a warning limit only when not negative, the amplification limit
// and the mesh only when given, over the configuration file's.
func TestInvocationSettings(t *testing.T) {
	base := Invocation{FailOnName: "error", WarningLimit: -1, Mesh: "none"}
	with := func(edit func(*Invocation)) Invocation { in := base; edit(&in); return in }
	for _, tc := range []struct {
		name    string
		in      Invocation
		failOn  checks.Severity
		limit   int // of MaxRetryAmplification, 0 when unset
		maxWarn int // -1 when unset
		mesh    string
		err     string
	}{
		{"defaults", base, checks.Error, 0, -1, "", ""},
		{"fail on warning", with(func(in *Invocation) { in.FailOnName = "warning" }), checks.Warning, 0, -1, "", ""},
		{"unknown severity", with(func(in *Invocation) { in.FailOnName = "fatal" }), 0, 0, -1, "", `--fail-on: unknown severity "fatal" (want error or warning)`},
		{"warning limit", with(func(in *Invocation) { in.WarningLimit = 0 }), checks.Error, 0, 0, "", ""},
		{"amplification not given", with(func(in *Invocation) { in.MaxAmplification = 0 }), checks.Error, 0, -1, "", ""},
		{"amplification given", with(func(in *Invocation) { in.MaxAmplification, in.Given = 3, givenFlags("max-retry-amplification") }), checks.Error, 3, -1, "", ""},
		{"amplification below one", with(func(in *Invocation) { in.MaxAmplification, in.Given = 0, givenFlags("max-retry-amplification") }), 0, 0, -1, "", "--max-retry-amplification must be at least 1, got 0"},
		{"mesh given", with(func(in *Invocation) { in.Given = givenFlags("mesh") }), checks.Error, 0, -1, "none", ""},
	} {
		s, err := tc.in.settings()
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %s", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		limit, maxWarn := 0, -1
		if s.Flags.MaxRetryAmplification != nil {
			limit = *s.Flags.MaxRetryAmplification
		}
		if s.MaxWarnings != nil {
			maxWarn = *s.MaxWarnings
		}
		if s.FailOn != tc.failOn || limit != tc.limit || maxWarn != tc.maxWarn || s.Flags.Mesh != tc.mesh {
			t.Errorf("%s: fail-on %v, amplification %d, max warnings %d, mesh %q; want %v, %d, %d, %q",
				tc.name, s.FailOn, limit, maxWarn, s.Flags.Mesh, tc.failOn, tc.limit, tc.maxWarn, tc.mesh)
		}
	}
}

// Execute writes the report in the formats asked for, shows snippets on
// a terminal unless --snippet says otherwise, and gives the verdict.
func TestInvocationExecute(t *testing.T) {
	leaveCollector(t)
	dir := set(t, "rules/IDL112/key-not-logged")
	base := Invocation{Settings: Settings{NoConfig: true}, Format: "text", FailOnName: "error", WarningLimit: -1, Version: "v1"}
	run := func(in Invocation) (failed bool, stdout, stderr string) {
		t.Helper()
		var out, notes strings.Builder
		failed, err := in.Execute([]string{dir}, strings.NewReader(""), &out, &notes)
		if err != nil {
			t.Fatal(err)
		}
		return failed, out.String(), notes.String()
	}
	// The set's one finding is IDL112's warning; the source line shown
	// under it holds the member it names.
	failed, plain, _ := run(base)
	if failed || !strings.Contains(plain, "IDL112") {
		t.Fatalf("text report %q, failed %v; want IDL112 and a pass", plain, failed)
	}
	snippet := func(report string) bool { return strings.Count(report, "\n") > strings.Count(plain, "\n") }
	onTerminal := base
	onTerminal.Terminal = true
	if _, out, _ := run(onTerminal); !snippet(out) {
		t.Errorf("on a terminal: %q, want the source line under the finding", out)
	}
	onTerminal.Given = givenFlags("snippet") // --snippet=false
	if _, out, _ := run(onTerminal); snippet(out) {
		t.Errorf("on a terminal with --snippet=false: %q, want no source line", out)
	}
	asked := base
	asked.Snippet = true
	if _, out, _ := run(asked); !snippet(out) {
		t.Errorf("with --snippet: %q, want the source line under the finding", out)
	}

	warning := base
	warning.FailOnName = "warning"
	if failed, _, _ := run(warning); !failed {
		t.Error("--fail-on warning passed a set with a warning")
	}
	limited := base
	limited.WarningLimit = 0
	if failed, _, notes := run(limited); !failed || notes != "idemlint: too many warnings: 1, --max-warnings is 0\n" {
		t.Errorf("--max-warnings 0: failed %v, notes %q; want a failure saying why", failed, notes)
	}

	// --output FORMAT=PATH alone leaves standard output empty; with
	// --format given, standard output gets that format too.
	path := filepath.Join(t.TempDir(), "report.json")
	toFile := base
	toFile.Outputs = []string{"json=" + path}
	if _, out, _ := run(toFile); out != "" {
		t.Errorf("with --output json=PATH alone, standard output %q, want nothing", out)
	}
	if written, err := os.ReadFile(path); err != nil || !strings.Contains(string(written), `"IDL112"`) {
		t.Errorf("--output json=PATH wrote %q, %v; want the JSON report", written, err)
	}
	toFile.Given = givenFlags("format")
	if _, out, _ := run(toFile); out != plain {
		t.Errorf("with --format text and --output json=PATH, standard output %q, want the text report %q", out, plain)
	}
}

// Spec holds the sets to the OpenAPI description it names, which counts
// among the files checked.
func TestInvocationSpec(t *testing.T) {
	leaveCollector(t)
	dir, inSet := setWithSpec(t)
	summary := func(spec string) string {
		t.Helper()
		in := Invocation{Settings: Settings{NoConfig: true}, Spec: spec, Format: "text", FailOnName: "error", WarningLimit: -1}
		var out strings.Builder
		if _, err := in.Execute([]string{dir}, nil, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		return lines[len(lines)-1]
	}
	// Out of the set, so that the run without it does not see it either.
	spec := filepath.Join(t.TempDir(), filepath.Base(inSet))
	if err := os.Rename(filepath.Join(dir, inSet), spec); err != nil {
		t.Fatal(err)
	}
	plain, held := summary(""), summary(spec)
	var files, heldFiles int
	if _, err := fmt.Sscanf(plain, "%d files checked", &files); err != nil {
		t.Fatalf("summary %q: %v", plain, err)
	}
	if _, err := fmt.Sscanf(held, "%d files checked", &heldFiles); err != nil || heldFiles != files+1 {
		t.Errorf("summary with the description %q, without %q; want one file more", held, plain)
	}
}

// A flag that cannot be read is refused before any file is read, the
// description first.
func TestInvocationUsageErrors(t *testing.T) {
	leaveCollector(t)
	for _, tc := range []struct {
		in   Invocation
		want string
	}{
		{Invocation{Spec: "missing.yaml", Format: "yaml", FailOnName: "error"}, "missing.yaml"},
		{Invocation{Format: "yaml", FailOnName: "error"}, `unknown format "yaml"`},
		{Invocation{Format: "text", FailOnName: "fatal"}, `--fail-on: unknown severity "fatal"`},
	} {
		var out strings.Builder
		failed, err := tc.in.Execute([]string{filepath.Join(t.TempDir(), "missing")}, nil, &out, &out)
		if failed || err == nil || !strings.HasPrefix(err.Error(), tc.want) || out.Len() > 0 {
			t.Errorf("%+v: failed %v, error %v, output %q; want %s and nothing written", tc.in, failed, err, out.String(), tc.want)
		}
	}
}
