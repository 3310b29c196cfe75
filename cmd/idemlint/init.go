package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/starter"
)

func newInitCmd() *cobra.Command {
	var opts starter.Options
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a starter boundary set (one flow, all four documents) that passes check",
		Long:  longHelp("init"),
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if opts.KeyHeader != "" && opts.Spec == "" {
				return errors.New("--key-header names the key header of a description: give --from-openapi FILE")
			}
			return starter.Init(dir, opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&opts.Spec, "from-openapi", "", "write one flow per tag of this OpenAPI 3.x or Swagger 2.0 description (YAML or JSON)")
	cmd.Flags().StringVar(&opts.KeyHeader, "key-header", "", "the idempotency key header (default: the one the description declares)")
	cmd.Flags().BoolVarP(&opts.Verbose, "verbose", "v", false, "list every note, not one line per kind")
	_ = cmd.MarkFlagFilename("from-openapi", "yaml", "yml", "json")
	return cmd
}
