package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/lint"
)

func newOpenAPICmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "openapi",
		Short: "Hold a boundary set and an OpenAPI description of the API to one another",
		Long:  longHelp("openapi"),
	}
	cmd.AddCommand(newOpenAPICheckCmd())
	// Without this, cobra answers an unknown subcommand with the help and
	// exit status 0.
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	return cmd
}

func newOpenAPICheckCmd() *cobra.Command {
	var in lint.Invocation
	cmd := &cobra.Command{
		Use:   "check --spec FILE PATH...",
		Short: "Check a boundary set, and hold it to an OpenAPI description (IDL301-IDL304)",
		Long:  longHelp("openapi-check"),
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if in.Spec == "" {
				return errors.New("--spec FILE is required: the OpenAPI description to hold the set to")
			}
			return runCheck(cmd, in, args)
		},
	}
	cmd.Flags().StringVar(&in.Spec, "spec", "", "the OpenAPI 3.x description (YAML or JSON)")
	_ = cmd.MarkFlagFilename("spec", "yaml", "yml", "json")
	checkFlags(cmd, &in)
	return cmd
}
