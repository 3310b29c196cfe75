package main

import (
	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/asbuilt"
	"github.com/idemlint/idemlint/checks/config"
	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/checks/report"
)

func newCheckCmd() *cobra.Command {
	var in lint.Invocation
	cmd := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Check a boundary set: schemas, per-document rules and chains",
		Long:  longHelp("check"),
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"."} // as "init" writes into "."
			}
			return runCheck(cmd, in, args)
		},
	}
	checkFlags(cmd, &in)
	return cmd
}

// checkFlags defines the flags of "check", which "openapi check" shares,
// each setting its field of in.
func checkFlags(cmd *cobra.Command, in *lint.Invocation) {
	fl := cmd.Flags()
	fl.StringVarP(&in.Format, "format", "f", "text", "output format on standard output: "+joinNames(report.Names()))
	fl.StringArrayVarP(&in.Outputs, "output", "o", nil, "FORMAT or FORMAT=PATH: write FORMAT to standard output or to PATH; repeatable")
	fl.IntVar(&in.MaxAmplification, "max-retry-amplification", checks.DefaultLimits().MaxRetryAmplification, "IDL208: largest allowed product of max_attempts along a chain")
	fl.StringVar(&in.ConfigPath, "config", "", "configuration file (default: the nearest "+config.FileName+")")
	fl.BoolVar(&in.NoConfig, "no-config", false, "use no configuration file")
	fl.BoolVar(&in.Flags.FollowSymlinks, "follow-symlinks", false, "follow symbolic links that lead outside the checked paths and the configuration's directory")
	fl.BoolVar(&in.AllowEmpty, "allow-empty", false, "exit 0 when no boundary document is found (by default that is a usage error, exit 2)")
	fl.StringVar(&in.FailOnName, "fail-on", "error", "least severity that fails the check: error or warning")
	fl.IntVar(&in.WarningLimit, "max-warnings", -1, "fail when there are more warnings than this (-1: no limit)")
	fl.StringVar(&in.Baseline, "baseline", "", "hide the findings recorded in this baseline file; report only new ones")
	fl.StringVar(&in.WriteBaseline, "write-baseline", "", "record every finding of this run in this baseline file")
	fl.StringVar(&in.NewFromRev, "new-from-rev", "", "report only findings in files changed since this git revision, and chains through them")
	fl.BoolVar(&in.Snippet, "snippet", false, "show the source line under each finding of the text format (default: when standard output is a terminal)")
	fl.BoolVarP(&in.Verbose, "verbose", "v", false, "say on standard error which rules did not run, and why")
	fl.StringArrayVar(&in.Flags.AsBuilt, "as-built", nil, "proxy and mesh configuration to hold the set to (YAML or JSON, nginx.conf, haproxy.cfg; a directory is walked for *.yaml, *.yml, *.json, *.conf, *.cfg); repeatable")
	fl.StringVar(&in.Mesh, "mesh", string(asbuilt.NoMesh), "the mesh that carries hops no --as-built resource routes: none or istio")
	fl.StringVar(&in.StdinName, "stdin-filename", "", `with "-": the path the document on standard input has, for positions and the configuration`)
	cmd.MarkFlagsMutuallyExclusive("config", "no-config")
	completeFlag(cmd, "format", report.Names()...)
	completeFlag(cmd, "fail-on", "error", "warning")
	completeFlag(cmd, "mesh", string(asbuilt.NoMesh), string(asbuilt.IstioMesh))
	_ = cmd.MarkFlagFilename("config", "json")
	_ = cmd.MarkFlagFilename("baseline", "json")
	_ = cmd.MarkFlagFilename("write-baseline", "json")
}

// runCheck runs the check in describes on paths.
func runCheck(cmd *cobra.Command, in lint.Invocation, paths []string) error {
	out := cmd.OutOrStdout()
	in.Given, in.Version = cmd.Flags().Changed, buildVersion()
	in.Terminal, in.Color = isTerminal(out), colorEnabled(out)
	failed, err := in.Execute(paths, cmd.InOrStdin(), out, cmd.ErrOrStderr())
	if failed {
		return exitCode(exitFindings)
	}
	return err
}
