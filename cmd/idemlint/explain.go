package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/explain"
)

func newExplainCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "explain RULE",
		Short: "Explain a rule: why it matters, how to fix it, a bad and a good example",
		Long: `Explain prints a rule's id, name, severity and summary, why it matters and how
to fix a finding, then two examples taken from the fixture sets the tests hold
the checker to, so they cannot drift from what "check" does:

  Bad   the lines around the rule's first finding in its first fixture set
        that triggers it, with that finding;
  Good  the same place (the same JSON Pointer) in a near-miss set, one that
        does not trigger the rule.

RULE is an id such as IDL102 (any case); "idemlint rules" lists them.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeRuleID,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errNoRule()
			}
			r, ok := checks.Lookup(args[0])
			if !ok {
				return fmt.Errorf(`unknown rule %q; "idemlint rules" lists the rule ids`, args[0])
			}
			return explain.Write(cmd.OutOrStdout(), r)
		},
	}
}

// errNoRule is the usage error of "explain" without a rule: it names the
// rule ids, since that is what the user was looking for.
func errNoRule() error {
	var ids []string
	for _, r := range checks.Rules() {
		ids = append(ids, r.ID)
	}
	return fmt.Errorf("explain needs a rule id, e.g. \"idemlint explain IDL102\"; the rules are %s (\"idemlint rules\" lists them with their summaries)",
		strings.Join(ids, ", "))
}
