package main

import (
	"fmt"
	"slices"

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
			if !slices.Contains(report.GraphFormats, format) {
				return fmt.Errorf("unknown format %q (want %s)", format, joinNames(report.GraphFormats))
			}
			graphs, err := lint.Graphs(args, lint.Settings{Notes: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			return report.Graphs(cmd.OutOrStdout(), graphs, format)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+joinNames(report.GraphFormats))
	return cmd
}
