package main

import (
	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/checks/report"
)

func newGraphCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "graph PATH...",
		Short: "Print every operation's chain with the key's fate at each hop",
		Long:  longHelp("graph"),
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return lint.WriteGraphs(cmd.OutOrStdout(), args, format, lint.Settings{Notes: cmd.ErrOrStderr()})
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+joinNames(report.GraphFormats))
	return cmd
}
