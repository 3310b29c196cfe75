package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/fixtures"
)

func newInitCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a starter boundary set (one flow, all four documents) that passes check",
		Long: `Init writes a complete, valid boundary set for one flow into DIR (default ".",
created if needed): the browser -> BFF, BFF -> gateway and gateway -> adapter
edges of a POST /orders request, and the adapter's idempotency policy. It is
the reference set the tests hold to zero findings, so "idemlint check DIR"
passes; rename the components and operations, then adapt the policy.

Init never overwrites: if any of the files exists it writes nothing and exits
with status 2, naming them.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			starter, err := fixtures.Lookup(fixtures.Base)
			if err != nil {
				return err
			}
			files, err := fs.Glob(starter.Files, "*")
			if err != nil {
				return err
			}
			var existing []string
			for _, name := range files {
				target := filepath.Join(dir, name)
				if _, err := os.Lstat(target); err == nil {
					existing = append(existing, target)
				}
			}
			if len(existing) > 0 {
				return fmt.Errorf("refusing to overwrite %s; nothing written", strings.Join(existing, ", "))
			}
			// Materialize refuses to overwrite too, in case a file was
			// created since the check.
			if err := starter.Materialize(dir); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, name := range files {
				fmt.Fprintf(w, "created %s\n", filepath.Join(dir, name))
			}
			fmt.Fprintf(w, "next: rename the components and operations, then run: idemlint check %s\n", dir)
			return nil
		},
	}
}
