package main

import (
	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/checks/report"
)

func newRulesCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List every rule: id, severity, scope and summary",
		Long:  longHelp("rules"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return report.WriteRules(cmd.OutOrStdout(), lint.Rules, format)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+joinNames(report.RuleFormats))
	completeFlag(cmd, "format", report.RuleFormats...)
	return cmd
}
