package main

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "idemlint",
		Short: "Prove that an idempotency key survives every hop and that services honour it",
		Long: `idemlint checks boundary JSON files: every hop of a state-changing request
(browser -> BFF -> gateway -> adapter) and the adapter's idempotency policy.
It proves the key is required, forwarded and owned exactly once, and that the
policy is sound; then it can probe a running service against that policy.

Start with "idemlint init DIR" for a starter set, "idemlint rules" for the
rules, "idemlint probes" for conform's probes and "idemlint explain ID" for
one of them. Shell completion: see "idemlint completion --help".`,
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
