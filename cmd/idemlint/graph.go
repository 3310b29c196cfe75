package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/checks/report"
)

func newGraphCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "graph PATH...",
		Short: "Print every operation's chain with the key's fate at each hop",
		Long: `Graph links the boundary documents under the given files and directories into
chains, as "check" does, and prints each state-changing operation's chain from
the browser to the adapter policy with what happens to the idempotency key at
every hop: required (browser edge), forwarded (BFF and gateway edges), owned
(adapter policy), or, on a broken hop, DROPPED (an allowlist drops it), NOT
REQUIRED, NOT OWNED, or where the chain stops.

Formats: "text" (a table per chain, with file:line:column of every hop),
"mermaid" (a flowchart to paste into a pull request or Markdown docs) and
"dot" (Graphviz). In the diagrams broken hops are red and a chain that stops
ends in a dashed arrow. With an "as_built" section in .idemlint.json, the
text format lists under each chain what its hops do as built (retries and
dropped headers), and the diagrams add it to each edge's label. Several boundary sets (the configuration's "sets") draw
as one diagram with a cluster (Graphviz) or subgraph (Mermaid) per set.

Graph draws; it does not judge. It exits 0 whatever the chains look like
("check" reports them as findings), 2 on a usage error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(report.GraphFormats, format) {
				return fmt.Errorf("unknown format %q (want %s)", format, joinNames(report.GraphFormats))
			}
			graphs, err := lint.Graphs(args, lint.Settings{Notes: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			return report.Graphs(cmd.OutOrStdout(), graphs, format)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+joinNames(report.GraphFormats))
	return cmd
}
