package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/boundary"
	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/checks/fileset"
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
ends in a dashed arrow.

Graph draws; it does not judge. It exits 0 whatever the chains look like
("check" reports them as findings), 2 on a usage error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(chain.Formats, format) {
				return fmt.Errorf("unknown format %q (want %s)", format, joinNames(chain.Formats))
			}
			docs, unparsed, err := loadDocuments(args)
			if err != nil {
				return err
			}
			g := chain.Build(docs)
			g.Gaps += unparsed
			if g.Gaps > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "idemlint: cannot link %d of %d files (idemlint check says why); chains that need them are drawn as stopping\n", g.Gaps, len(docs)+unparsed)
			}
			return chain.Render(cmd.OutOrStdout(), g, format)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+joinNames(chain.Formats))
	return cmd
}

// loadDocuments parses the boundary files under paths. Files that cannot be
// read or are not a JSON object are counted, not fatal: "check" explains
// them, and the picture of the rest is still worth drawing.
func loadDocuments(paths []string) (docs []*boundary.Document, unparsed int, err error) {
	files, skipped, err := fileset.Collect(paths)
	if err != nil {
		return nil, 0, err
	}
	for _, f := range files {
		src, err := fileset.Read(f)
		if err != nil {
			unparsed++
			continue
		}
		if doc, _ := boundary.Parse(f, src); doc != nil {
			docs = append(docs, doc)
		} else {
			unparsed++
		}
	}
	return docs, unparsed + len(skipped), nil
}
