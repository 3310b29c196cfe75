package main

import (
	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/explain"
	"github.com/idemlint/idemlint/reference/conform"
)

func newExplainCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "explain RULE|PROBE",
		Short: "Explain a rule (why it matters, how to fix it, examples) or a conform probe",
		Long: `Explain prints a rule's id, name, severity and summary, why it matters and how
to fix a finding, then two examples taken from the fixture sets the tests hold
the checker to, so they cannot drift from what "check" does:

  Bad   the lines around the rule's first finding in its first fixture set
        that triggers it, with that finding;
  Good  the same place (the same JSON Pointer) in a near-miss set, one that
        does not trigger the rule.

RULE is an id such as IDL102 (any case); "idemlint rules" lists them.

PROBE is the id of a conform probe such as CF07 (any case); explain prints what
it checks, why it matters, what it sends, when it passes, when it is skipped,
how many requests it sends and how much it lets the effects counter grow.
"idemlint probes" lists them.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeRuleID,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return explain.NoIDError()
			}
			if r, ok := checks.Lookup(args[0]); ok {
				return explain.Write(cmd.OutOrStdout(), r)
			}
			if p, ok := conform.LookupProbe(args[0]); ok {
				return p.Explain(cmd.OutOrStdout())
			}
			return explain.UnknownIDError(args[0], conform.SuggestProbe(args[0]))
		},
	}
}
