package main

import (
	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/asbuilt"
	"github.com/idemlint/idemlint/checks/explain"
	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/reference/conform"
)

func newExplainCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "explain RULE|PROBE",
		Short:             "Explain a rule (why it matters, how to fix it, examples) or a conform probe",
		Long:              longHelp("explain"),
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeRuleID,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return explain.NoIDError(lint.Rules)
			}
			if r, ok := lint.Rules.Lookup(args[0]); ok {
				return explain.Write(cmd.OutOrStdout(), r)
			}
			if p, ok := conform.LookupProbe(args[0]); ok {
				return p.Explain(cmd.OutOrStdout())
			}
			if d, ok := asbuilt.LookupDefault(args[0]); ok {
				return d.Explain(cmd.OutOrStdout()) // a platform default a finding names
			}
			return explain.UnknownIDError(lint.Rules, args[0], conform.SuggestProbe(args[0]))
		},
	}
}
