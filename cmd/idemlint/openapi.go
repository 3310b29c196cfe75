package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/checks/openapi"
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
	var (
		in   lint.Invocation
		spec string
	)
	cmd := &cobra.Command{
		Use:   "check --spec FILE PATH...",
		Short: "Check a boundary set, and hold it to an OpenAPI description (IDL301-IDL304)",
		Long:  longHelp("openapi-check"),
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if spec == "" {
				return errors.New("--spec FILE is required: the OpenAPI description to hold the set to")
			}
			api, err := openapi.Load(spec)
			if err != nil {
				return err
			}
			return runCheck(cmd, in, args, api)
		},
	}
	cmd.Flags().StringVar(&spec, "spec", "", "the OpenAPI 3.x description (YAML or JSON)")
	_ = cmd.MarkFlagFilename("spec", "yaml", "yml", "json")
	checkFlags(cmd, &in)
	return cmd
}
