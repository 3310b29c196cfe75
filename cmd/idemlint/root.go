package main

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "idemlint",
		Short:         "Prove that an idempotency key survives every hop and that services honour it",
		Long:          longHelp("idemlint"),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newCheckCmd(), newVersionCmd(), newSchemaCmd())
	root.AddCommand(newRulesCmd(), newProbesCmd(), newExplainCmd(), newInitCmd(), newGraphCmd(), newServeCmd(), newConformCmd(), newOpenAPICmd(), newLSPCmd())
	return root
}

// colorEnabled reports whether output to w may be coloured: only when w is
// a terminal and NO_COLOR is unset or empty (https://no-color.org).
func colorEnabled(w io.Writer) bool {
	return os.Getenv("NO_COLOR") == "" && isTerminal(w)
}

// isTerminal reports whether w is a terminal, where a person reads.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
