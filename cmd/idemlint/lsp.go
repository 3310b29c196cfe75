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
		Long: `Lsp speaks the Language Server Protocol on standard input and output. It
checks the workspace's boundary set as "check" would (the nearest
.idemlint.json applies), with the editor's unsaved buffers in place of their
files, and publishes every finding, chain rules included, on open, change and
save. Hover on a finding explains its rule; a code action adds an
x-idemlint-ignore entry for it, with a reason to fill in.

Exit status: 0 after the client's shutdown and exit, 1 when the session ends
without shutdown, 2 on a message that cannot be read.`,
		Args: cobra.NoArgs,
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
