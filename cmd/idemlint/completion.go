package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/reference/conform"
)

// Shell completion is cobra's "completion" command (bash, zsh, fish,
// powershell), which cobra adds to the root. The functions here teach it
// idemlint's own words: flag values and rule ids.

// completeFlag completes the value of cmd's flag name with values.
func completeFlag(cmd *cobra.Command, name string, values ...string) {
	// The flag is defined by the caller just before: failing to find it is
	// a programming error that every completion test would show.
	if err := cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)); err != nil {
		panic(err)
	}
}

// completeRuleID completes a rule or probe id argument, with each rule's
// summary (each probe's name) as the description shells that support it
// show.
func completeRuleID(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, r := range lint.Rules.Sorted() {
		if strings.HasPrefix(r.ID, strings.ToUpper(toComplete)) {
			out = append(out, r.ID+"\t"+r.Summary)
		}
	}
	for _, p := range conform.Probes() {
		if strings.HasPrefix(p.ID, strings.ToUpper(toComplete)) {
			out = append(out, p.ID+"\t"+p.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
