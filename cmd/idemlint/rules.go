package main

import (
	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/report"
)

func newRulesCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List every rule: id, severity, scope and summary",
		Long: `Rules lists every rule idemlint checks: its id, default severity, whether it
looks at one document, at the chains across documents, or at the sets against
an OpenAPI description ("openapi check"), and what it requires.
"idemlint explain ID" shows why a rule matters, how to fix a finding, and a bad
and a good example. "idemlint probes" lists conform's probes the same way.

Formats: text (an aligned table), json (an array of objects with id, name,
severity, cross_document and summary) and markdown (a table for docs, each id
linking to the rule's fixtures, the examples explain shows).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return report.WriteRules(cmd.OutOrStdout(), format)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+joinNames(report.RuleFormats))
	completeFlag(cmd, "format", report.RuleFormats...)
	return cmd
}
