package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing/fstest"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/fixtures"
)

func newInitCmd() *cobra.Command {
	var fromOpenAPI string
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a starter boundary set (one flow, all four documents) that passes check",
		Long: `Init writes a complete, valid boundary set for one flow into DIR (default ".",
created if needed): the browser -> BFF, BFF -> gateway and gateway -> adapter
edges of a POST /orders request, and the adapter's idempotency policy. It is
the reference set the tests hold to zero findings, so "idemlint check DIR"
passes; rename the components and operations, then adapt the policy.

With --from-openapi FILE, init writes one such flow per tag of an OpenAPI 3.x
description (YAML or JSON) into DIR/<tag>/ (untagged operations, or all of
them when none has a tag, into DIR/api/): every operation of the flow with
its operation_key from its operationId (lower-cased, other characters than
[a-z0-9._:-] as "-") or from its method and path, the browser edge's paths
prefixed with the first server's base path, info.version as
contract_version, and the key header the description declares (a required
header parameter whose name contains "idempotency"), x-idempotency-key
otherwise. The result passes "idemlint check"; "idemlint openapi check
--spec FILE DIR" then relates it to the description.

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
			if fromOpenAPI != "" {
				if starter, err = openAPIStarter(cmd, fromOpenAPI, starter); err != nil {
					return err
				}
			}
			var files []string
			err = fs.WalkDir(starter.Files, ".", func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, filepath.Join(dir, filepath.FromSlash(p)))
				}
				return err
			})
			if err != nil {
				return err
			}
			var existing []string
			for _, target := range files {
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
			for _, target := range files {
				fmt.Fprintf(w, "created %s\n", target)
			}
			if fromOpenAPI != "" {
				fmt.Fprintf(w, "next: adapt each flow's components and policy, then run: idemlint openapi check --spec %s %s\n", fromOpenAPI, dir)
				return nil
			}
			fmt.Fprintf(w, "next: rename the components and operations, then run: idemlint check %s\n", dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&fromOpenAPI, "from-openapi", "", "write one flow per tag of this OpenAPI 3.x description (YAML or JSON)")
	_ = cmd.MarkFlagFilename("from-openapi", "yaml", "yml", "json")
	return cmd
}

// openAPIStarter is the starter set built from the description at spec,
// each flow a copy of the base starter set; operations no boundary
// document can carry are named on stderr.
func openAPIStarter(cmd *cobra.Command, spec string, base fixtures.Case) (fixtures.Case, error) {
	api, err := openapi.Load(spec)
	if err != nil {
		return fixtures.Case{}, err
	}
	names, err := fs.Glob(base.Files, "*.json")
	if err != nil {
		return fixtures.Case{}, err
	}
	template := map[string][]byte{}
	for _, name := range names {
		if template[name], err = fs.ReadFile(base.Files, name); err != nil {
			return fixtures.Case{}, err
		}
	}
	docs, skipped, err := openapi.Starter(api, template)
	if err != nil {
		return fixtures.Case{}, err
	}
	for _, s := range skipped {
		fmt.Fprintf(cmd.ErrOrStderr(), "idemlint: skipped %s: boundary documents carry GET, HEAD, OPTIONS, POST, PUT, PATCH and DELETE\n", s)
	}
	files := fstest.MapFS{}
	for _, d := range docs {
		files[d.Path] = &fstest.MapFile{Data: d.Data, Mode: 0o644}
	}
	return fixtures.Case{Files: files}, nil
}
