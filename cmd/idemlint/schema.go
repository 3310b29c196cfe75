package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/schemas"
)

func newSchemaCmd() *cobra.Command {
	var outDir string
	cmd := &cobra.Command{
		Use:   "schema [KIND]",
		Short: "Print the JSON Schema of a boundary kind (or list the kinds), or write them all",
		Long: `Schema prints the JSON Schema (draft 2020-12) that "check" validates a
document of KIND against, so an editor can use it: save it and point the
document's "$schema" field at the file ("./schemas/adapter.schema.json"). Every
schema is self-contained: the shared definitions are included, so a saved file
resolves offline. "config" is the schema of .idemlint.json. Without KIND it
lists the names it can print.

--out DIR writes every schema (or KIND's only) to DIR/NAME.schema.json,
replacing files of those names.`,
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
