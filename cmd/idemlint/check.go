package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/report"
)

func newCheckCmd() *cobra.Command {
	opts := checks.DefaultOptions()
	var format string
	cmd := &cobra.Command{
		Use:   "check PATH...",
		Short: "Check a boundary set: schemas, per-document rules and chains",
		Long: `Check loads every *.json file under the given files and directories as one
boundary set (skipping dot-files and dot-directories), validates each document
against the JSON Schema of its kind, runs the per-document rules, then the
cross-boundary chain rules, and reports findings as file:line:column.

Exit status: 0 when there is no error finding (warnings allowed), 1 when there
is at least one, 2 on a usage error or a named path that does not exist.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := report.New(format, report.Options{Color: colorEnabled(cmd.OutOrStdout())})
			if err != nil {
				return err
			}
			if opts.MaxRetryAmplification < 1 {
				return fmt.Errorf("--max-retry-amplification must be at least 1, got %d", opts.MaxRetryAmplification)
			}
			res, err := checks.Check(args, opts)
			if err != nil {
				return err
			}
			rep := &report.Report{Findings: res.Findings, Files: res.Files, Rules: checks.Rules(), Version: buildVersion()}
			if err := f.Format(cmd.OutOrStdout(), rep); err != nil {
				return err
			}
			if errs, _ := checks.Count(res.Findings); errs > 0 {
				return exitCode(exitFindings)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+joinNames(report.Names()))
	cmd.Flags().IntVar(&opts.MaxRetryAmplification, "max-retry-amplification", opts.MaxRetryAmplification, "IDL208: largest allowed product of max_attempts along a chain")
	return cmd
}
