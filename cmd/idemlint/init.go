package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/schemas"
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
--spec FILE DIR" then relates it to the description, and reports IDL302 only
for a state-changing operation that does not declare the key header, which
init names: the description is what to fix there. The adapter's operations
carry the description's JSON request examples as example.body, which
"conform" sends.

Each document's "$schema" names its kind's self-contained JSON Schema, which
init writes to DIR/.schemas/, so editors complete and validate offline (check
skips dot-directories).

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
			var keyGaps []string
			if fromOpenAPI != "" {
				if starter, keyGaps, err = openAPIStarter(cmd, fromOpenAPI, starter); err != nil {
					return err
				}
			}
			if starter, err = withSchemas(starter); err != nil {
				return err
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
			for _, op := range keyGaps {
				fmt.Fprintf(w, "note: openapi check will report IDL302 at %s until the description declares the key header as a required header parameter: the browser edge requires the key for it (IDL101), so the description is what to fix\n", op)
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
// each flow a copy of the base starter set, and the operations "openapi
// check" will report for want of the key header (openapi.KeyGaps);
// operations no boundary document can carry are named on stderr.
func openAPIStarter(cmd *cobra.Command, spec string, base fixtures.Case) (fixtures.Case, []string, error) {
	api, err := openapi.Load(spec)
	if err != nil {
		return fixtures.Case{}, nil, err
	}
	names, err := fs.Glob(base.Files, "*.json")
	if err != nil {
		return fixtures.Case{}, nil, err
	}
	template := map[string][]byte{}
	for _, name := range names {
		if template[name], err = fs.ReadFile(base.Files, name); err != nil {
			return fixtures.Case{}, nil, err
		}
	}
	docs, skipped, err := openapi.Starter(api, template)
	if err != nil {
		return fixtures.Case{}, nil, err
	}
	for _, s := range skipped {
		fmt.Fprintf(cmd.ErrOrStderr(), "idemlint: skipped %s: boundary documents carry GET, HEAD, OPTIONS, POST, PUT, PATCH and DELETE\n", s)
	}
	files := fstest.MapFS{}
	for _, d := range docs {
		files[d.Path] = &fstest.MapFile{Data: d.Data, Mode: 0o644}
	}
	return fixtures.Case{Files: files}, openapi.KeyGaps(api), nil
}

// starterSchemaDir holds the schemas the starter documents name in
// "$schema"; a dot-directory, so "check" does not take them for documents.
const starterSchemaDir = ".schemas"

// withSchemas returns the starter set with a first member "$schema" in
// each document, naming its kind's schema, and the self-contained schemas
// of the kinds under starterSchemaDir, so editors complete and validate
// the documents offline.
func withSchemas(set fixtures.Case) (fixtures.Case, error) {
	files := fstest.MapFS{}
	err := fs.WalkDir(set.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(set.Files, p)
		if err != nil {
			return err
		}
		if path.Ext(p) == ".json" {
			if data, err = withSchema(p, data); err != nil {
				return err
			}
		}
		files[p] = &fstest.MapFile{Data: data, Mode: 0o644}
		return nil
	})
	for _, kind := range schemas.Kinds() {
		src, _ := schemas.SelfContained(kind)
		files[path.Join(starterSchemaDir, schemaFile(kind))] = &fstest.MapFile{Data: src, Mode: 0o644}
	}
	set.Files = files
	return set, err
}

// withSchema inserts "$schema" into the document at p (slash-separated,
// relative to the set's directory). The path starts with "./" or "../",
// which makes editors (VS Code) resolve it against the document's
// directory.
func withSchema(p string, data []byte) ([]byte, error) {
	var doc struct {
		Boundary string `json:"boundary"`
	}
	open := bytes.IndexByte(data, '{')
	if err := json.Unmarshal(data, &doc); err != nil || open < 0 || doc.Boundary == "" {
		return nil, fmt.Errorf("starter document %s is not a boundary document", p)
	}
	up := "./"
	if depth := strings.Count(p, "/"); depth > 0 {
		up = strings.Repeat("../", depth)
	}
	member := fmt.Sprintf("\n  \"$schema\": \"%s%s/%s\",", up, starterSchemaDir, schemaFile(doc.Boundary))
	return slices.Concat(data[:open+1], []byte(member), data[open+1:]), nil
}
