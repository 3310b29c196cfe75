package lint

import (
	"fmt"
	"io"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/checks/report"
)

// Invocation is a check as the command line gives it ("check" and
// "openapi check"): the settings the flags set directly, and the flags
// that need reading or whose absence leaves the configuration file's
// value in force.
type Invocation struct {
	Settings
	// Spec is the OpenAPI description to hold the sets to (--spec of
	// "openapi check"), read into Settings.API; "" for none.
	Spec string
	// Format is the format on standard output (--format); Outputs are the
	// FORMAT or FORMAT=PATH of --output.
	Format  string
	Outputs []string
	// FailOnName is --fail-on, the name of the least failing severity.
	FailOnName string
	// WarningLimit is --max-warnings; negative, no limit.
	WarningLimit int
	// MaxAmplification is --max-retry-amplification and Mesh is --mesh,
	// each used only when given.
	MaxAmplification int
	Mesh             string
	// Snippet shows the source line under each finding of the text
	// format (--snippet); when it is not given, only on a terminal.
	Snippet bool
	// Terminal says standard output is a terminal, and Color that the
	// text format may be coloured there.
	Terminal, Color bool
	// Given reports whether the flag of that name was on the command
	// line; nil, none was.
	Given func(flag string) bool
	// Version is idemlint's version, as the reports show it.
	Version string
}

// given reports whether the flag name was on the command line.
func (in Invocation) given(name string) bool { return in.Given != nil && in.Given(name) }

// Execute checks the sets at paths with the document on stdin for "-",
// writes the report in each format to stdout or its file and the notes to
// stderr, and reports whether the check failed (--fail-on,
// --max-warnings). Its error is a usage or I/O error. It is for a process
// that runs one check: it lets the heap grow before the process's first
// collection (see firstCollectionAt).
func (in Invocation) Execute(paths []string, stdin io.Reader, stdout, stderr io.Writer) (failed bool, err error) {
	if in.Spec != "" {
		if in.API, err = openapi.Load(in.Spec); err != nil {
			return false, err
		}
		openapi.WriteNotes(stderr, in.API.Notes, in.Verbose)
	}
	ropts := report.Options{Color: in.Color}
	var stdinSrc []byte // the document on standard input, once read
	if in.Snippet || !in.given("snippet") && in.Terminal {
		ropts.Source = report.SourceOf(&stdinSrc)
	}
	outs, err := report.SelectOutputs(in.Format, in.given("format"), in.Outputs, ropts)
	if err != nil {
		return false, err
	}
	s, err := in.settings()
	if err != nil {
		return false, err
	}
	s.Stdin, s.Notes = stdin, stderr
	deferFirstCollection(firstCollectionAt)
	run, err := Run(paths, s)
	if err != nil {
		return false, err
	}
	stdinSrc = run.Stdin
	if err := report.WriteAll(outs, stdout, run.Report(in.Version)); err != nil {
		return false, err
	}
	return run.Failed(), nil
}

// settings are in's Settings with the flags that need reading applied.
func (in Invocation) settings() (Settings, error) {
	s := in.Settings
	var err error
	if s.FailOn, err = checks.ParseSeverity(in.FailOnName); err != nil {
		return s, fmt.Errorf("--fail-on: %w", err)
	}
	if in.given("max-retry-amplification") {
		if in.MaxAmplification < 1 {
			return s, fmt.Errorf("--max-retry-amplification must be at least 1, got %d", in.MaxAmplification)
		}
		s.Flags.MaxRetryAmplification = &in.MaxAmplification
	}
	if in.WarningLimit >= 0 {
		s.MaxWarnings = &in.WarningLimit
	}
	if in.given("mesh") {
		s.Flags.Mesh = in.Mesh
	}
	return s, nil
}
