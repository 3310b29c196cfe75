package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/config"
	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/checks/report"
)

func newCheckCmd() *cobra.Command {
	var flags checkFlags
	cmd := &cobra.Command{
		Use:   "check PATH...",
		Short: "Check a boundary set: schemas, per-document rules and chains",
		Long: `Check loads every *.json file under the given files and directories as one
boundary set (skipping dot-files and dot-directories), validates each document
against the JSON Schema of its kind, runs the per-document rules, then the
cross-boundary chain rules, and reports findings as file:line:column.

Formats: text (default), json, sarif (SARIF 2.1.0 for code scanning), junit
(JUnit XML test results) and github (GitHub Actions annotations).

Settings come from the flags, then the project configuration file, then the
defaults. The configuration file is --config FILE, or else the nearest
.idemlint.json in the directory of the first PATH or above it (--no-config
skips it): rule levels ("off", "error", "warning"), files to ignore and the
rules' limits. A document can hide one rule's findings in that file with
"x-idemlint-ignore": [{"rule": "IDL112", "reason": "..."}].

Exit status: 1 when a finding reaches --fail-on (error by default; warning
fails on warnings too) or there are more warnings than --max-warnings; 0
otherwise; 2 on a usage error, an invalid configuration file or a named path
that does not exist.`,
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
	format, configPath, failOn string
	noConfig, allowEmpty       bool
	maxAmplification           int
	maxWarnings                int
	config                     config.Flags
}

func (c *checkFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&c.format, "format", "f", "text", "output format: "+joinNames(report.Names()))
	fl.IntVar(&c.maxAmplification, "max-retry-amplification", checks.DefaultLimits().MaxRetryAmplification, "IDL208: largest allowed product of max_attempts along a chain")
	fl.StringVar(&c.configPath, "config", "", "configuration file (default: the nearest "+config.FileName+")")
	fl.BoolVar(&c.noConfig, "no-config", false, "use no configuration file")
	fl.BoolVar(&c.config.FollowSymlinks, "follow-symlinks", false, "follow symbolic links that lead outside the checked paths and the configuration's directory")
	fl.BoolVar(&c.allowEmpty, "allow-empty", false, "exit 0 when no boundary document is found (by default that is a usage error, exit 2)")
	fl.StringVar(&c.failOn, "fail-on", "error", "least severity that fails the check: error or warning")
	fl.IntVar(&c.maxWarnings, "max-warnings", -1, "fail when there are more warnings than this (-1: no limit)")
	cmd.MarkFlagsMutuallyExclusive("config", "no-config")
	completeFlag(cmd, "format", report.Names()...)
	completeFlag(cmd, "fail-on", "error", "warning")
	_ = cmd.MarkFlagFilename("config", "json")
}

// run checks the sets at paths, held to the API description when api is
// not nil, writes the report and returns the verdict.
func (c *checkFlags) run(cmd *cobra.Command, paths []string, api *openapi.API) error {
	f, err := report.New(c.format, report.Options{Color: colorEnabled(cmd.OutOrStdout())})
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
	cfg, err := loadConfig(c.configPath, c.noConfig, paths[0])
	if err != nil {
		return err
	}
	opts := config.Options(cfg, c.config)
	opts.API = api
	res, err := checks.Check(paths, opts)
	if err != nil {
		return err
	}
	if len(res.Documents) == 0 && !c.allowEmpty {
		return errNoDocuments(paths)
	}
	rep := &report.Report{Findings: res.Findings, Files: res.Files, Unreadable: res.Unreadable, NotBoundary: res.NotBoundary,
		Rules: checks.Rules(), Version: buildVersion(), FailOn: threshold}
	for _, d := range res.Documents {
		rep.Paths = append(rep.Paths, d.Path)
	}
	if api != nil {
		rep.Files++
		rep.Paths = append(rep.Paths, api.Path)
	}
	if err := f.Format(cmd.OutOrStdout(), rep); err != nil {
		return err
	}
	return verdict(cmd.ErrOrStderr(), res.Findings, threshold, c.maxWarnings)
}

// errNoDocuments is the usage error of a run that found no boundary
// document: a wrong path or an ignore-everything configuration must not
// pass as a clean check.
func errNoDocuments(paths []string) error {
	return fmt.Errorf("no boundary documents found under %s (a boundary document is a JSON object with spec_version or boundary)", strings.Join(paths, " "))
}

// loadConfig returns the configuration named by --config, or the one found
// from the first checked path; nil with --no-config or when there is none.
func loadConfig(explicit string, none bool, start string) (*config.Config, error) {
	switch {
	case none:
		return nil, nil
	case explicit != "":
		return config.Load(explicit)
	}
	path, err := config.Find(start)
	if err != nil || path == "" {
		return nil, err
	}
	return config.Load(path)
}

// verdict turns the findings into the exit status: findings at or above
// failOn fail the check, and so do more warnings than maxWarnings (when it
// is not negative), which is said on w because no finding shows it.
func verdict(w io.Writer, findings []checks.Finding, failOn checks.Severity, maxWarnings int) error {
	errs, warns := checks.Count(findings)
	failed := errs > 0 || (failOn == checks.Warning && warns > 0)
	if maxWarnings >= 0 && warns > maxWarnings {
		fmt.Fprintf(w, "idemlint: too many warnings: %d, --max-warnings is %d\n", warns, maxWarnings)
		failed = true
	}
	if failed {
		return exitCode(exitFindings)
	}
	return nil
}
