package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/asbuilt"
	"github.com/idemlint/idemlint/checks/baseline"
	"github.com/idemlint/idemlint/checks/changed"
	"github.com/idemlint/idemlint/checks/config"
	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/checks/report"
	"github.com/idemlint/idemlint/schemas/fileset"
)

func newCheckCmd() *cobra.Command {
	var flags checkFlags
	cmd := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Check a boundary set: schemas, per-document rules and chains",
		Long: `Check loads every *.json file under the given files and directories (by
default the current directory) as one boundary set (skipping dot-files,
dot-directories and JSON that is no boundary document), validates each document
against the JSON Schema of its kind, runs the per-document rules, then the
cross-boundary chain rules, and reports findings as file:line:column. "check -"
reads one document from standard input (--stdin-filename names it).

Formats: text (default), json, sarif (SARIF 2.1.0 for code scanning), junit
(JUnit XML test results), github (GitHub Actions annotations) and markdown (a
GitHub job summary: the counts and every finding in a table). --output
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
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"."} // as "init" writes into "."
			}
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
	snippet, verbose            bool
	maxAmplification            int
	maxWarnings                 int
	config                      config.Flags
	asBuilt                     []string
	mesh                        string
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
	fl.BoolVar(&c.snippet, "snippet", false, "show the source line under each finding of the text format (default: when standard output is a terminal)")
	fl.BoolVarP(&c.verbose, "verbose", "v", false, "say on standard error which rules did not run, and why")
	fl.StringArrayVar(&c.asBuilt, "as-built", nil, "proxy and mesh configuration to hold the set to (YAML or JSON; a directory is walked for *.yaml, *.yml, *.json); repeatable")
	fl.StringVar(&c.mesh, "mesh", string(asbuilt.NoMesh), "the mesh that carries hops no --as-built resource routes: none or istio")
	fl.StringVar(&c.stdinName, "stdin-filename", "", `with "-": the path the document on standard input has, for positions and the configuration`)
	cmd.MarkFlagsMutuallyExclusive("config", "no-config")
	completeFlag(cmd, "format", report.Names()...)
	completeFlag(cmd, "fail-on", "error", "warning")
	completeFlag(cmd, "mesh", string(asbuilt.NoMesh), string(asbuilt.IstioMesh))
	_ = cmd.MarkFlagFilename("config", "json")
	_ = cmd.MarkFlagFilename("baseline", "json")
	_ = cmd.MarkFlagFilename("write-baseline", "json")
}

// run checks the sets at paths, held to the API description when api is
// not nil, writes the report and returns the verdict.
func (c *checkFlags) run(cmd *cobra.Command, paths []string, api *openapi.API) error {
	ropts := report.Options{Color: colorEnabled(cmd.OutOrStdout())}
	var stdinSrc []byte // the document on standard input, once read
	if c.snippet || !cmd.Flags().Changed("snippet") && isTerminal(cmd.OutOrStdout()) {
		ropts.Source = report.SourceOf(&stdinSrc)
	}
	outs, err := report.SelectOutputs(c.format, cmd.Flags().Changed("format"), c.outputs, ropts)
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
	var base *baseline.Stage
	if path := cmp.Or(c.baselinePath, c.writeBaseline); path != "" {
		if base, err = baseline.NewStage(path, c.writeBaseline != ""); err != nil {
			return err
		}
	}
	var sinceRev *changed.Stage
	if c.newFromRev != "" {
		if sinceRev, err = changed.NewStage(start, c.newFromRev); err != nil {
			return err
		}
	}
	cfg, err := config.Discover(c.configPath, c.noConfig, start)
	if err != nil {
		return err
	}
	opts := config.Options(cfg, c.config)
	opts.FailOn = threshold
	if c.maxWarnings >= 0 {
		opts.MaxWarnings = &c.maxWarnings
	}
	if base != nil {
		opts.Baseline = base.Filter
	}
	if sinceRev != nil {
		opts.NewFromRev = sinceRev.Filter
	}
	if api != nil {
		openapi.Use(&opts, api)
	}
	asBuiltFlags := c.config
	asBuiltFlags.AsBuilt = c.asBuilt
	if cmd.Flags().Changed("mesh") {
		asBuiltFlags.Mesh = c.mesh
	}
	src, given, err := config.AsBuilt(cfg, asBuiltFlags)
	if err != nil {
		return err
	}
	var deployment *asbuilt.Deployment
	if given {
		deployment, err = asbuilt.Open(src, cmd.ErrOrStderr())
	}
	if err != nil {
		return err
	}
	if deployment != nil {
		asbuilt.Use(&opts, deployment)
	}
	if !fromStdin {
		cfg.NoteIgnored(cmd.ErrOrStderr(), paths)
	}
	var res *checks.Result
	if fromStdin {
		res, stdinSrc, err = checkStdin(cmd.InOrStdin(), cmp.Or(c.stdinName, "<stdin>"), opts)
	} else {
		res, err = checks.Check(paths, opts)
	}
	if err != nil {
		return err
	}
	if c.verbose {
		report.NotRun(cmd.ErrOrStderr(), res.NotRun)
	}
	switch {
	case len(res.Facts) > 0 || c.allowEmpty:
	case res.Unreadable > 0:
		// Files that are not JSON may be broken boundary documents: their
		// IDL001 findings say why, and they fail the check.
	case fromStdin:
		return fmt.Errorf("standard input is not a boundary document (a JSON object with spec_version or boundary)")
	default:
		return errNoDocuments(paths)
	}
	// What the narrowing stages did, which no finding shows.
	if base != nil {
		if err := base.Finish(cmd.ErrOrStderr()); err != nil {
			return err
		}
	}
	if sinceRev != nil {
		sinceRev.Report(cmd.ErrOrStderr())
	}
	rep := report.Of(res, buildVersion(), threshold)
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
	opts.ReadFile = func(string) ([]byte, error) { return src, err }
	return checks.CheckFiles([]string{name}, opts), src, nil
}

// errNoDocuments is the usage error of a run that found no boundary
// document: a wrong path or an ignore-everything configuration must not
// pass as a clean check.
func errNoDocuments(paths []string) error {
	return fmt.Errorf("no boundary documents found under %s (a boundary document is a JSON object with spec_version or boundary)", strings.Join(paths, " "))
}
