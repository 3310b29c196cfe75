package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
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
			files, err := starterFiles()
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
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, name := range files {
				target := filepath.Join(dir, name)
				if err := writeNew(target, name); err != nil {
					return err
				}
				fmt.Fprintf(w, "created %s\n", target)
			}
			fmt.Fprintf(w, "next: rename the components and operations, then run: idemlint check %s\n", dir)
			return nil
		},
	}
}

// starterFiles lists the documents of the starter set, sorted.
func starterFiles() ([]string, error) {
	entries, err := fs.ReadDir(fixtures.FS, fixtures.Starter)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// writeNew writes the starter document name to target, which must not
// exist: O_EXCL keeps a file created since the check from being clobbered.
func writeNew(target, name string) error {
	data, err := fs.ReadFile(fixtures.FS, path.Join(fixtures.Starter, name))
	if err != nil {
		return err
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
