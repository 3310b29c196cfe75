package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/openapi"
)

func newOpenAPICmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "openapi",
		Short: "Hold a boundary set and an OpenAPI description of the API to one another",
		Long: `The OpenAPI bridge relates the API description clients code against (OpenAPI
3.0 or 3.1, YAML or JSON) to the boundary set behind it. Its operations are
matched to the operations of browser_to_bff edges by method and path
template, a server URL's base path prefixed; parameter names do not matter.

"idemlint init --from-openapi FILE DIR" writes a starter set from a
description.`,
	}
	cmd.AddCommand(newOpenAPICheckCmd())
	// Without this, cobra answers an unknown subcommand with the help and
	// exit status 0.
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	return cmd
}

func newOpenAPICheckCmd() *cobra.Command {
	var (
		flags checkFlags
		spec  string
	)
	cmd := &cobra.Command{
		Use:   "check --spec FILE PATH...",
		Short: "Check a boundary set, and hold it to an OpenAPI description (IDL301-IDL304)",
		Long: `Check runs everything "idemlint check PATH..." runs, plus the OpenAPI rules
IDL301-IDL304 ("idemlint rules" lists them with their summaries).

Findings point into the OpenAPI file or the boundary document with line and
column. Formats, configuration, suppressions and exit status are those of
"check". A description that cannot be used (not OpenAPI 3.x, larger than
8 MiB, a $ref that does not resolve, a $ref to a URL or to a file outside
its directory) is an error with exit status 2: nothing is ever fetched from
the network.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if spec == "" {
				return errors.New("--spec FILE is required: the OpenAPI description to hold the set to")
			}
			api, err := openapi.Load(spec)
			if err != nil {
				return err
			}
			return flags.run(cmd, args, api)
		},
	}
	cmd.Flags().StringVar(&spec, "spec", "", "the OpenAPI 3.x description (YAML or JSON)")
	_ = cmd.MarkFlagFilename("spec", "yaml", "yml", "json")
	flags.register(cmd)
	return cmd
}
