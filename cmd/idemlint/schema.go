package main

import (
	"fmt"
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
			names := schemas.Names()
			if len(args) == 1 {
				if _, ok := schemas.SelfContained(args[0]); !ok {
					return fmt.Errorf("unknown schema %q (want one of %s)", args[0], joinNames(names))
				}
				names = args
			}
			switch {
			case outDir != "":
				return schemas.WriteFiles(cmd.OutOrStdout(), outDir, names)
			case len(args) == 0:
				fmt.Fprintln(cmd.OutOrStdout(), strings.Join(names, "\n"))
				return nil
			}
			src, _ := schemas.SelfContained(args[0])
			_, err := cmd.OutOrStdout().Write(src)
			return err
		},
	}
	cmd.Flags().StringVar(&outDir, "out", "", "write the schemas to this directory instead of printing")
	_ = cmd.MarkFlagDirname("out")
	return cmd
}

func joinNames(names []string) string { return strings.Join(names, ", ") }
