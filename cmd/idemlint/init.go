package main

import (
	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/checks/starter"
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
			var api *openapi.API
			if fromOpenAPI != "" {
				var err error
				if api, err = openapi.Load(fromOpenAPI); err != nil {
					return err
				}
			}
			return starter.Init(dir, api, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&fromOpenAPI, "from-openapi", "", "write one flow per tag of this OpenAPI 3.x description (YAML or JSON)")
	_ = cmd.MarkFlagFilename("from-openapi", "yaml", "yml", "json")
	return cmd
}
