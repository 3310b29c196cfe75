package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/asbuilt"
	"github.com/idemlint/idemlint/checks/config"
	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/checks/report"
)

func newCheckCmd() *cobra.Command {
	var flags checkFlags
	cmd := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Check a boundary set: schemas, per-document rules and chains",
		Long:  longHelp("check"),
		Args:  cobra.ArbitraryArgs,
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
	lint.Settings
	format, failOn   string
	outputs          []string
	snippet          bool
	maxAmplification int
	maxWarnings      int
	mesh             string
}

func (c *checkFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&c.format, "format", "f", "text", "output format on standard output: "+joinNames(report.Names()))
	fl.StringArrayVarP(&c.outputs, "output", "o", nil, "FORMAT or FORMAT=PATH: write FORMAT to standard output or to PATH; repeatable")
	fl.IntVar(&c.maxAmplification, "max-retry-amplification", checks.DefaultLimits().MaxRetryAmplification, "IDL208: largest allowed product of max_attempts along a chain")
	fl.StringVar(&c.ConfigPath, "config", "", "configuration file (default: the nearest "+config.FileName+")")
	fl.BoolVar(&c.NoConfig, "no-config", false, "use no configuration file")
	fl.BoolVar(&c.Flags.FollowSymlinks, "follow-symlinks", false, "follow symbolic links that lead outside the checked paths and the configuration's directory")
	fl.BoolVar(&c.AllowEmpty, "allow-empty", false, "exit 0 when no boundary document is found (by default that is a usage error, exit 2)")
	fl.StringVar(&c.failOn, "fail-on", "error", "least severity that fails the check: error or warning")
	fl.IntVar(&c.maxWarnings, "max-warnings", -1, "fail when there are more warnings than this (-1: no limit)")
	fl.StringVar(&c.Baseline, "baseline", "", "hide the findings recorded in this baseline file; report only new ones")
	fl.StringVar(&c.WriteBaseline, "write-baseline", "", "record every finding of this run in this baseline file")
	fl.StringVar(&c.NewFromRev, "new-from-rev", "", "report only findings in files changed since this git revision, and chains through them")
	fl.BoolVar(&c.snippet, "snippet", false, "show the source line under each finding of the text format (default: when standard output is a terminal)")
	fl.BoolVarP(&c.Verbose, "verbose", "v", false, "say on standard error which rules did not run, and why")
	fl.StringArrayVar(&c.Flags.AsBuilt, "as-built", nil, "proxy and mesh configuration to hold the set to (YAML or JSON; a directory is walked for *.yaml, *.yml, *.json); repeatable")
	fl.StringVar(&c.mesh, "mesh", string(asbuilt.NoMesh), "the mesh that carries hops no --as-built resource routes: none or istio")
	fl.StringVar(&c.StdinName, "stdin-filename", "", `with "-": the path the document on standard input has, for positions and the configuration`)
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
	if c.FailOn, err = checks.ParseSeverity(c.failOn); err != nil {
		return fmt.Errorf("--fail-on: %w", err)
	}
	if cmd.Flags().Changed("max-retry-amplification") {
		if c.maxAmplification < 1 {
			return fmt.Errorf("--max-retry-amplification must be at least 1, got %d", c.maxAmplification)
		}
		c.Flags.MaxRetryAmplification = &c.maxAmplification
	}
	if c.maxWarnings >= 0 {
		c.MaxWarnings = &c.maxWarnings
	}
	if cmd.Flags().Changed("mesh") {
		c.Flags.Mesh = c.mesh
	}
	c.API, c.Stdin, c.Notes = api, cmd.InOrStdin(), cmd.ErrOrStderr()
	deferFirstCollection(firstCollectionAt)
	run, err := lint.Check(paths, c.Settings)
	if err != nil {
		return err
	}
	stdinSrc = run.Stdin
	if err := report.WriteAll(outs, cmd.OutOrStdout(), run.Report(buildVersion())); err != nil {
		return err
	}
	if run.Failed() {
		return exitCode(exitFindings)
	}
	return nil
}
