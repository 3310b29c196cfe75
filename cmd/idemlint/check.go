package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/baseline"
	"github.com/idemlint/idemlint/checks/changed"
	"github.com/idemlint/idemlint/checks/config"
	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/checks/report"
	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/fileset"
)

func newCheckCmd() *cobra.Command {
	var flags checkFlags
	cmd := &cobra.Command{
		Use:   "check PATH...",
		Short: "Check a boundary set: schemas, per-document rules and chains",
		Long: `Check loads every *.json file under the given files and directories as one
boundary set (skipping dot-files and dot-directories), validates each document
against the JSON Schema of its kind, runs the per-document rules, then the
cross-boundary chain rules, and reports findings as file:line:column. "check -"
reads one document from standard input (--stdin-filename names it).

Formats: text (default), json, sarif (SARIF 2.1.0 for code scanning), junit
(JUnit XML test results) and github (GitHub Actions annotations). --output
FORMAT=PATH writes a format to a file, and can be repeated, so one run feeds
both annotations and code scanning.

Settings come from the flags, then the project configuration file, then the
defaults. The configuration file is --config FILE, or else the nearest
.idemlint.json in the directory of the first PATH or above it (--no-config
skips it): rule levels ("off", "error", "warning"), files to ignore and the
rules' limits. A document can hide one rule's findings in that file with
"x-idemlint-ignore": [{"rule": "IDL112", "reason": "..."}].

To adopt idemlint on an existing set, record today's findings with
--write-baseline FILE and check with --baseline FILE: only new findings are
reported. --new-from-rev REV reports only findings in files changed since the
git revision REV, and chain findings whose chain passes through one.

Exit status: 1 when a finding reaches --fail-on (error by default; warning
fails on warnings too) or there are more warnings than --max-warnings; 0
otherwise; 2 on a usage error, an invalid configuration or baseline file or a
named path that does not exist.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return flags.run(cmd, args, nil)
		},
	}
	flags.register(cmd)
	return cmd
}

// checkFlags are the flags of "check", which "openapi check" shares.
type checkFlags struct {
	format, configPath, failOn  string
	outputs                     []string
	baselinePath, writeBaseline string
	newFromRev, stdinName       string
	noConfig, allowEmpty        bool
	verbose                     bool
	maxAmplification            int
	maxWarnings                 int
	config                      config.Flags
}

func (c *checkFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&c.format, "format", "f", "text", "output format on standard output: "+joinNames(report.Names()))
	fl.StringArrayVarP(&c.outputs, "output", "o", nil, "FORMAT or FORMAT=PATH: write FORMAT to standard output or to PATH; repeatable")
	fl.IntVar(&c.maxAmplification, "max-retry-amplification", checks.DefaultLimits().MaxRetryAmplification, "IDL208: largest allowed product of max_attempts along a chain")
	fl.StringVar(&c.configPath, "config", "", "configuration file (default: the nearest "+config.FileName+")")
	fl.BoolVar(&c.noConfig, "no-config", false, "use no configuration file")
	fl.BoolVar(&c.config.FollowSymlinks, "follow-symlinks", false, "follow symbolic links that lead outside the checked paths and the configuration's directory")
	fl.BoolVar(&c.allowEmpty, "allow-empty", false, "exit 0 when no boundary document is found (by default that is a usage error, exit 2)")
	fl.StringVar(&c.failOn, "fail-on", "error", "least severity that fails the check: error or warning")
	fl.IntVar(&c.maxWarnings, "max-warnings", -1, "fail when there are more warnings than this (-1: no limit)")
	fl.StringVar(&c.baselinePath, "baseline", "", "hide the findings recorded in this baseline file; report only new ones")
	fl.StringVar(&c.writeBaseline, "write-baseline", "", "record every finding of this run in this baseline file")
	fl.StringVar(&c.newFromRev, "new-from-rev", "", "report only findings in files changed since this git revision, and chains through them")
	fl.BoolVarP(&c.verbose, "verbose", "v", false, "say on standard error which rules did not run, and why")
	fl.StringVar(&c.stdinName, "stdin-filename", "", `with "-": the path the document on standard input has, for positions and the configuration`)
	cmd.MarkFlagsMutuallyExclusive("config", "no-config")
	completeFlag(cmd, "format", report.Names()...)
	completeFlag(cmd, "fail-on", "error", "warning")
	_ = cmd.MarkFlagFilename("config", "json")
	_ = cmd.MarkFlagFilename("baseline", "json")
	_ = cmd.MarkFlagFilename("write-baseline", "json")
}

// run checks the sets at paths, held to the API description when api is
// not nil, writes the report and returns the verdict.
func (c *checkFlags) run(cmd *cobra.Command, paths []string, api *openapi.API) error {
	specs := c.outputs
	if len(specs) == 0 || cmd.Flags().Changed("format") {
		if _, err := report.New(c.format, report.Options{}); err != nil {
			return err // named as --format, not as an --output
		}
		specs = append([]string{c.format}, specs...)
	}
	outs, err := report.ParseOutputs(specs, report.Options{Color: colorEnabled(cmd.OutOrStdout())})
	if err != nil {
		return err
	}
	threshold, err := checks.ParseSeverity(c.failOn)
	if err != nil {
		return fmt.Errorf("--fail-on: %w", err)
	}
	if cmd.Flags().Changed("max-retry-amplification") {
		if c.maxAmplification < 1 {
			return fmt.Errorf("--max-retry-amplification must be at least 1, got %d", c.maxAmplification)
		}
		c.config.MaxRetryAmplification = &c.maxAmplification
	}
	fromStdin := slices.Contains(paths, "-")
	switch {
	case fromStdin && len(paths) > 1:
		return errors.New(`"-" (standard input) must be the only PATH`)
	case c.stdinName != "" && !fromStdin:
		return errors.New(`--stdin-filename needs "-" as the PATH`)
	case c.baselinePath != "" && c.writeBaseline != "":
		return errors.New("--baseline and --write-baseline: give one (--write-baseline records the findings a later --baseline hides)")
	}
	start := paths[0]
	if fromStdin {
		start = cmp.Or(c.stdinName, ".")
	}
	n := &narrowing{write: c.writeBaseline != "", rev: c.newFromRev}
	switch {
	case c.baselinePath != "":
		n.base, err = baseline.Load(c.baselinePath)
	case n.write:
		n.base, err = baseline.New(c.writeBaseline)
	}
	if err != nil {
		return err
	}
	if c.newFromRev != "" {
		if n.changed, err = changed.Since(gitDir(start), c.newFromRev); err != nil {
			return err
		}
	}
	opts, err := config.Discovered(c.configPath, c.noConfig, start, c.config)
	if err != nil {
		return err
	}
	opts.FailOn = threshold
	if c.maxWarnings >= 0 {
		opts.MaxWarnings = &c.maxWarnings
	}
	if api != nil {
		openapi.Use(&opts, api)
	}
	n.stages(&opts)
	var res *checks.Result
	if fromStdin {
		res, err = checkStdin(cmd.InOrStdin(), cmp.Or(c.stdinName, "<stdin>"), opts)
	} else {
		res, err = checks.Check(paths, opts)
	}
	if err != nil {
		return err
	}
	if c.verbose {
		reportNotRun(cmd.ErrOrStderr(), res.NotRun)
	}
	switch {
	case len(res.Documents) > 0 || c.allowEmpty:
	case res.Unreadable > 0:
		// Files that are not JSON may be broken boundary documents: their
		// IDL001 findings say why, and they fail the check.
	case fromStdin:
		return fmt.Errorf("standard input is not a boundary document (a JSON object with spec_version or boundary)")
	default:
		return errNoDocuments(paths)
	}
	if err := n.finish(cmd.ErrOrStderr()); err != nil {
		return err
	}
	findings := res.Findings
	rep := &report.Report{Findings: findings, Files: res.Files, Unreadable: res.Unreadable, NotBoundary: res.NotBoundary,
		Rules: checks.Rules(), Version: buildVersion(), FailOn: threshold}
	for _, d := range res.Documents {
		rep.Paths = append(rep.Paths, d.Path)
	}
	if api != nil {
		rep.Files++
		rep.Paths = append(rep.Paths, api.Path)
	}
	if err := report.WriteAll(outs, cmd.OutOrStdout(), rep); err != nil {
		return err
	}
	if res.Verdict.TooManyWarnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "idemlint: too many warnings: %d, --max-warnings is %d\n", res.Verdict.Warnings, c.maxWarnings)
	}
	if res.Verdict.Failed {
		return exitCode(exitFindings)
	}
	return nil
}

// reportNotRun says on w which rules did not run and why, the rules that
// share a reason on one line.
func reportNotRun(w io.Writer, notRun []checks.NotRun) {
	for i := 0; i < len(notRun); {
		j := i + 1
		for j < len(notRun) && notRun[j].Reason == notRun[i].Reason {
			j++
		}
		ids := make([]string, 0, j-i)
		for _, n := range notRun[i:j] {
			ids = append(ids, n.Rule)
		}
		fmt.Fprintf(w, "idemlint: %s did not run: %s\n", strings.Join(ids, ", "), notRun[i].Reason)
		i = j
	}
}

// checkStdin checks the one document on r as the file name.
func checkStdin(r io.Reader, name string, opts checks.Options) (*checks.Result, error) {
	src, err := fileset.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("standard input: %w", err)
	}
	opts.ReadFile = func(string) ([]byte, error) { return src, nil }
	return checks.CheckFiles([]string{name}, opts), nil
}

// gitDir is the directory git runs in for --new-from-rev: the first path's,
// or the path itself when it is a directory.
func gitDir(start string) string {
	if info, err := os.Stat(start); err == nil && info.IsDir() {
		return start
	}
	return filepath.Dir(start)
}

// narrowing is what --write-baseline, --baseline and --new-from-rev do
// to the findings: stages of the pipeline after the rules, and what each
// did, said once the run is over because no finding shows it.
type narrowing struct {
	base    *baseline.Baseline // --baseline, or --write-baseline's
	write   bool               // --write-baseline: record every finding in base first
	changed changed.Set        // --new-from-rev, since rev
	rev     string

	recorded    int
	outcome     baseline.Outcome
	hiddenByRev int
}

// stages sets the baseline and new-from-rev stages of opts.
func (n *narrowing) stages(opts *checks.Options) {
	if n.base != nil {
		opts.Baseline = func(findings []checks.Finding) []checks.Finding {
			if n.write {
				n.base.Record(findings)
				n.recorded = len(findings)
			}
			n.outcome = n.base.Filter(findings)
			return n.outcome.New
		}
	}
	if n.changed != nil {
		opts.NewFromRev = func(findings []checks.Finding, docs []*boundary.Document) []checks.Finding {
			kept := changed.Filter(findings, docs, n.changed)
			n.hiddenByRev = len(findings) - len(kept)
			return kept
		}
	}
}

// finish saves a recorded baseline and says on w what each stage did.
func (n *narrowing) finish(w io.Writer) error {
	if n.write {
		if err := n.base.Save(); err != nil {
			return err
		}
		fmt.Fprintf(w, "idemlint: recorded %s in baseline %s\n", report.Plural(n.recorded, "finding"), n.base.Path)
	}
	if n.base != nil {
		fmt.Fprintf(w, "idemlint: baseline %s hid %s", n.base.Path, report.Plural(n.outcome.Hidden, "finding"))
		if n.outcome.Stale > 0 {
			fmt.Fprintf(w, "; %s no longer occur (prune with --write-baseline %s)", report.Plural(n.outcome.Stale, "entry"), n.base.Path)
		}
		fmt.Fprintln(w)
	}
	if n.changed != nil {
		fmt.Fprintf(w, "idemlint: %s outside the files changed since %s not shown\n", report.Plural(n.hiddenByRev, "finding"), n.rev)
	}
	return nil
}

// errNoDocuments is the usage error of a run that found no boundary
// document: a wrong path or an ignore-everything configuration must not
// pass as a clean check.
func errNoDocuments(paths []string) error {
	return fmt.Errorf("no boundary documents found under %s (a boundary document is a JSON object with spec_version or boundary)", strings.Join(paths, " "))
}
