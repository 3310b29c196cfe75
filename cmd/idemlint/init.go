package main

import (
	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/starter"
)

func newInitCmd() *cobra.Command {
	var fromOpenAPI string
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a starter boundary set (one flow, all four documents) that passes check",
		Long:  longHelp("init"),
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return starter.Init(dir, fromOpenAPI, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&fromOpenAPI, "from-openapi", "", "write one flow per tag of this OpenAPI 3.x description (YAML or JSON)")
	_ = cmd.MarkFlagFilename("from-openapi", "yaml", "yml", "json")
	return cmd
}
