package main

import (
	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/reference/conform"
)

func newProbesCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "probes",
		Short: "List every conform probe: id, what it checks and what it sends",
		Long: `Probes lists the probes "idemlint conform" sends to a running service, in the
order they run: each one's id, the policy rule or property it checks, and what
it sends. "idemlint explain CF07" shows why a probe matters, what it sends,
when it passes and when it is skipped.

Formats: text (an aligned table), json (an array of objects with id, name,
checks, passes, why, sends and skipped) and markdown (README's probe table).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return conform.WriteProbes(cmd.OutOrStdout(), format)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+joinNames(conform.ProbeFormats))
	completeFlag(cmd, "format", conform.ProbeFormats...)
	return cmd
}
