// Package lint sets up and runs one check of boundary sets the way every
// command does: the project configuration discovered once and merged with
// the flags, the as-built configuration and the OpenAPI description
// supplied as inputs, the baseline and new-from-rev stages of the
// pipeline, standard input, and what the run says on standard error
// besides its findings. The commands fill Settings from their flags
// ("check" and "openapi check" an Invocation, which also reads the flags
// that need reading, writes the report and gives the verdict); "check",
// "openapi check", "graph", the language server and "conform --policy
// DIR" all read their sets through it.
package lint

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/asbuilt"
	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/checks/config"
	"github.com/idemlint/idemlint/checks/internal/baseline"
	"github.com/idemlint/idemlint/checks/internal/changed"
	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/checks/report"
	"github.com/idemlint/idemlint/schemas"
	"github.com/idemlint/idemlint/schemas/fileset"
)

// Settings are what the command line says about a run; the zero value
// reads the nearest configuration file and keeps its settings and the
// defaults.
type Settings struct {
	// ConfigPath is the configuration file to use instead of the nearest
	// one (--config); NoConfig uses none (--no-config).
	ConfigPath string
	NoConfig   bool
	// Flags are the settings given over the configuration file's.
	Flags config.Flags
	// Baseline hides the findings the baseline file it names records
	// (--baseline); WriteBaseline records them all in the file it names
	// (--write-baseline).
	Baseline, WriteBaseline string
	// NewFromRev keeps the findings of the files changed since this git
	// revision, and of the chains through them (--new-from-rev).
	NewFromRev string
	// FailOn is the least severity that fails the run; unset, Error.
	FailOn checks.Severity
	// MaxWarnings, when set, fails a run with more warnings.
	MaxWarnings *int
	// API, when set, holds the sets to an OpenAPI description
	// ("openapi check").
	API *openapi.API
	// Stdin is read for the path "-"; StdinName names its document
	// (--stdin-filename), "<stdin>" when empty.
	Stdin     io.Reader
	StdinName string
	// AllowEmpty lets a run that finds no boundary document pass
	// (--allow-empty); otherwise that is a usage error.
	AllowEmpty bool
	// Verbose says on Notes which rules did not run, and why.
	Verbose bool
	// Notes receives what the run says besides its findings (standard
	// error); nil discards it.
	Notes io.Writer
}

// notes is where s's notes go.
func (s *Settings) notes() io.Writer {
	if s.Notes == nil {
		return io.Discard
	}
	return s.Notes
}

// Rules are every rule idemlint applies: the one list its commands, the
// language server and the configuration's rule ids take their rules from.
var Rules = slices.Concat(checks.Core, openapi.Rules, asbuilt.Rules)

// DefaultOptions are the options of a run without a configuration: every
// rule of Rules, the default limits, and the JSON Schema stage, which
// words what does not conform to the boundary schemas.
func DefaultOptions() checks.Options {
	return withRules(checks.DefaultOptions())
}

// withRules sets the rules and the schema stage of idemlint's runs.
func withRules(opts checks.Options) checks.Options {
	opts.Rules = Rules
	opts.Schema = func() checks.SchemaStage { return schemas.NewValidator() }
	return opts
}

// Options returns the options of a run on the set at start (its first
// path, or a workspace): the configuration file --config names, else the
// nearest one above start, unless --no-config; its settings merged under
// s.Flags. The configuration is nil when there is none.
func Options(start string, s Settings) (checks.Options, *config.Config, error) {
	cfg, err := config.Discover(s.ConfigPath, s.NoConfig, start, Rules)
	if err != nil {
		return checks.Options{}, nil, err
	}
	return withRules(config.Options(cfg, s.Flags)), cfg, nil
}

// Inputs supplies the run of opts with its inputs: the OpenAPI description
// s names and the as-built configuration Deployment opens.
func Inputs(opts *checks.Options, cfg *config.Config, s Settings) error {
	if s.API != nil {
		opts.Inputs = append(opts.Inputs, openapi.Description.Supply(s.API))
	}
	d, err := Deployment(cfg, s)
	if d != nil {
		opts.Inputs = append(opts.Inputs, asbuilt.Config.Supply(d))
	}
	return err
}

// Deployment opens the as-built configuration the flags or cfg (nil: no
// file) name, saying on s.Notes what it read; nil when none is named.
func Deployment(cfg *config.Config, s Settings) (*asbuilt.Deployment, error) {
	src, given, err := config.AsBuilt(cfg, s.Flags)
	if err != nil || !given {
		return nil, err
	}
	src.ListSkipped = s.Verbose
	return asbuilt.Open(src, s.notes())
}

// Outcome is a finished check.
type Outcome struct {
	*checks.Result
	// Stdin is the document read from standard input, nil when none was.
	Stdin []byte

	settings Settings
}

// Run sets up the check of the sets under paths that s describes (the
// configuration discovered, the inputs supplied, the baseline and
// new-from-rev stages) and runs it ("-", the only path, checks the
// document s.Stdin holds); then it judges whether the run found anything
// to check, and finishes the stages, which say on s.Notes what they did,
// which no finding shows. Its error is a usage or I/O error: conflicting
// settings, a configuration, baseline or as-built configuration that
// cannot be used, a named path that does not exist, or no boundary
// document at all.
func Run(paths []string, s Settings) (*Outcome, error) {
	fromStdin := slices.Contains(paths, "-")
	switch {
	case fromStdin && len(paths) > 1:
		return nil, errors.New(`"-" (standard input) must be the only PATH`)
	case s.StdinName != "" && !fromStdin:
		return nil, errors.New(`--stdin-filename needs "-" as the PATH`)
	case s.Baseline != "" && s.WriteBaseline != "":
		return nil, errors.New("--baseline and --write-baseline: give one (--write-baseline records the findings a later --baseline hides)")
	}
	start := paths[0]
	if fromStdin {
		start = cmp.Or(s.StdinName, ".")
	}
	var base *baseline.Stage
	if path := cmp.Or(s.Baseline, s.WriteBaseline); path != "" {
		var err error
		if base, err = baseline.NewStage(path, s.WriteBaseline != ""); err != nil {
			return nil, err
		}
	}
	var sinceRev *changed.Stage
	if s.NewFromRev != "" {
		var err error
		if sinceRev, err = changed.NewStage(start, s.NewFromRev); err != nil {
			return nil, err
		}
	}
	opts, cfg, err := Options(start, s)
	if err != nil {
		return nil, err
	}
	opts.FailOn, opts.MaxWarnings = s.FailOn, s.MaxWarnings
	if base != nil {
		opts.Baseline = base
	}
	if sinceRev != nil {
		opts.NewFromRev = sinceRev
	}
	if err := Inputs(&opts, cfg, s); err != nil {
		return nil, err
	}
	run := &Outcome{settings: s}
	if fromStdin {
		run.Result, run.Stdin, err = checkStdin(s.Stdin, cmp.Or(s.StdinName, "<stdin>"), opts)
	} else {
		cfg.NoteIgnored(s.notes(), paths)
		run.Result, err = checks.CheckPaths(paths, opts)
	}
	if err != nil {
		return nil, err
	}
	if s.Verbose {
		report.NotRun(s.notes(), run.NotRun)
	}
	switch {
	case len(run.Facts) > 0 || s.AllowEmpty:
	case run.Unreadable > 0:
		// Files that are not JSON may be broken boundary documents: their
		// IDL001 findings say why, and they fail the check.
	case fromStdin:
		return nil, errors.New("standard input is not a boundary document (a JSON object with spec_version or boundary)")
	default:
		return nil, NoDocumentsError(paths)
	}
	if err := run.Finish(s.notes()); err != nil {
		return nil, err
	}
	return run, nil
}

// checkStdin checks the one document on r as the file name, and returns
// it.
func checkStdin(r io.Reader, name string, opts checks.Options) (*checks.Result, []byte, error) {
	src, err := fileset.ReadAll(r)
	// An oversized document is the document's finding (IDL001), as it is
	// for a named file; only a failing read is the run's.
	var tooLarge *fileset.TooLargeError
	if err != nil && !errors.As(err, &tooLarge) {
		return nil, nil, fmt.Errorf("standard input: %w", err)
	}
	opts.Files.ReadFile = func(string) ([]byte, error) { return src, err }
	return checks.CheckFiles([]string{name}, opts), src, nil
}

// Report is the run's report, as the formats write it, by idemlint
// version; the OpenAPI description counts among its files.
func (r *Outcome) Report(version string) *report.Report {
	rep := report.Of(r.Result, Rules, version, cmp.Or(r.settings.FailOn, checks.Error))
	if api := r.settings.API; api != nil {
		rep.Files++
		rep.Paths = append(rep.Paths, api.Path)
	}
	return rep
}

// Failed reports whether the run fails (the verdict of --fail-on and
// --max-warnings), saying on the settings' Notes when too many warnings
// fail it, which no finding shows.
func (r *Outcome) Failed() bool {
	if r.Verdict.TooManyWarnings {
		fmt.Fprintf(r.settings.notes(), "idemlint: too many warnings: %d, --max-warnings is %d\n", r.Verdict.Warnings, *r.settings.MaxWarnings)
	}
	return r.Verdict.Failed
}

// Graphs reads the sets under paths as "check" does, without checking
// them, and returns each set's chains for "idemlint graph", each hop
// noted with what it does as built when an as-built configuration is
// named. What could not be read is said on s.Notes.
func Graphs(paths []string, s Settings) ([]report.SetGraph, error) {
	opts, cfg, err := Options(paths[0], s)
	if err != nil {
		return nil, err
	}
	set, err := checks.Load(paths, opts)
	if err != nil {
		return nil, err
	}
	if set.Unreadable > 0 {
		fmt.Fprintf(s.notes(), "idemlint: cannot read %d of %d files (idemlint check says why); chains that need them are drawn as stopping\n", set.Unreadable, set.Files)
	}
	if len(set.Documents) == 0 {
		return nil, NoDocumentsError(paths)
	}
	d, err := Deployment(cfg, s)
	if err != nil {
		return nil, err
	}
	var hopNote func(*chain.Chain, int) string
	if d != nil {
		d.SayUnread(s.notes())
		hopNote = d.HopNote
	}
	graphs := make([]report.SetGraph, len(set.Sets))
	for i, docs := range set.Sets {
		g := chain.Build(docs)
		g.Unreadable = set.Unreadable
		graphs[i] = report.SetGraph{Name: set.SetNames[i], Graph: g, HopNote: hopNote}
	}
	return graphs, nil
}

// WriteGraphs writes the chains of the sets under paths to w in format
// ("idemlint graph"), read as Graphs reads them; an unknown format is
// refused before anything is read.
func WriteGraphs(w io.Writer, paths []string, format string, s Settings) error {
	if err := report.CheckGraphFormat(format); err != nil {
		return err
	}
	graphs, err := Graphs(paths, s)
	if err != nil {
		return err
	}
	return report.Graphs(w, graphs, format)
}

// NoDocumentsError is the usage error of a run that found no boundary
// document under paths: a wrong path or an ignore-everything
// configuration must not pass as a clean check.
func NoDocumentsError(paths []string) error {
	return fmt.Errorf("no boundary documents found under %s (a boundary document is a JSON object with spec_version or boundary)", strings.Join(paths, " "))
}

// SetOptions returns the options a boundary set directory is read with,
// as "check" reads it (for conform.SetOptions: the policy of a set).
func SetOptions(dir string) (checks.Options, error) {
	opts, _, err := Options(dir, Settings{})
	return opts, err
}
