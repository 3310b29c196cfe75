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
		Long:  longHelp("probes"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return conform.WriteProbes(cmd.OutOrStdout(), format)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+joinNames(conform.ProbeFormats))
	completeFlag(cmd, "format", conform.ProbeFormats...)
	return cmd
}
