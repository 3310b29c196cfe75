package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/cmd/idemlint/internal/lsp"
)

func newLSPCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "lsp",
		Short: "Run the language server (stdio) for editors",
		Long:  longHelp("lsp"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := lsp.Serve(cmd.InOrStdin(), cmd.OutOrStdout(), lsp.Options{Version: buildVersion(), Log: cmd.ErrOrStderr()})
			if errors.Is(err, lsp.ErrExitWithoutShutdown) {
				cmd.PrintErrln("idemlint:", err)
				return exitCode(exitFindings)
			}
			return err // a broken message: exit 2
		},
	}
}
