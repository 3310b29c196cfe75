package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/schemas"
)

func newSchemaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "schema [KIND]",
		Short: "Print the JSON Schema of a boundary kind (or list the kinds)",
		Long: `Schema prints the JSON Schema (draft 2020-12) that "check" validates a
document of KIND against, so an editor can use it: save it and point the
document's "$schema" field at the file. Shared definitions are in "common"; "config" is the schema of .idemlint.json.
Without KIND it lists the names it can print.`,
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: schemaNames(),
		RunE: func(cmd *cobra.Command, args []string) error {
			names := schemaNames()
			if len(args) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), strings.Join(names, "\n"))
				return nil
			}
			src, ok := schemas.Source(args[0])
			if !ok {
				return fmt.Errorf("unknown schema %q (want one of %s)", args[0], joinNames(names))
			}
			_, err := cmd.OutOrStdout().Write(src)
			return err
		},
	}
}

// schemaNames lists what "idemlint schema" prints: the kinds, then the
// shared definitions, the envelope and the project configuration.
func schemaNames() []string {
	return append(schemas.Kinds(), "common", "envelope", "config")
}

func joinNames(names []string) string { return strings.Join(names, ", ") }
