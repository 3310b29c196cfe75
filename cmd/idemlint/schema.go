package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/schemas"
)

func newSchemaCmd() *cobra.Command {
	var outDir string
	cmd := &cobra.Command{
		Use:       "schema [KIND]",
		Short:     "Print the JSON Schema of a boundary kind (or list the kinds), or write them all",
		Long:      longHelp("schema"),
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: schemas.Names(),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind := ""
			if len(args) == 1 {
				kind = args[0]
			}
			return schemas.Show(cmd.OutOrStdout(), kind, outDir)
		},
	}
	cmd.Flags().StringVar(&outDir, "out", "", "write the schemas to this directory instead of printing")
	_ = cmd.MarkFlagDirname("out")
	return cmd
}

func joinNames(names []string) string { return strings.Join(names, ", ") }
