package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/report"
)

// ruleFormats are the formats of "rules", sorted.
var ruleFormats = []string{"json", "markdown", "text"}

func newRulesCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List every rule: id, severity, scope and summary",
		Long: `Rules lists every rule idemlint checks: its id, default severity, whether it
looks at one document, at the chains across documents, or at the sets against
an OpenAPI description ("openapi check"), and what it requires.
"idemlint explain ID" shows why a rule matters, how to fix a finding, and a bad
and a good example. "idemlint probes" lists conform's probes the same way.

Formats: text (an aligned table), json (an array of objects with id, name,
severity, cross_document and summary) and markdown (a table for docs, each id
linking to the rule's fixtures, the examples explain shows).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			switch format {
			case "text":
				return rulesTable(w)
			case "json":
				return rulesJSON(w)
			case "markdown":
				return rulesMarkdown(w)
			}
			return fmt.Errorf("unknown format %q (want %s)", format, joinNames(ruleFormats))
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+joinNames(ruleFormats))
	completeFlag(cmd, "format", ruleFormats...)
	return cmd
}

func rulesTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSEVERITY\tSCOPE\tSUMMARY")
	for _, r := range checks.Rules() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Severity, r.Scope(), r.Summary)
	}
	return tw.Flush()
}

func rulesJSON(w io.Writer) error {
	type rule struct {
		ID            string          `json:"id"`
		Name          string          `json:"name"`
		Severity      checks.Severity `json:"severity"`
		CrossDocument bool            `json:"cross_document"`
		Summary       string          `json:"summary"`
	}
	out := []rule{}
	for _, r := range checks.Rules() {
		out = append(out, rule{r.ID, r.Name, r.Severity, r.CrossDocument(), r.Summary})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// rulesMarkdown writes the README's rule table; ids link to the fixtures
// relative to the repository root.
func rulesMarkdown(w io.Writer) error {
	cell := strings.NewReplacer("|", `\|`)
	var b strings.Builder
	b.WriteString("| Rule | Severity | Scope | Requires |\n|---|---|---|---|\n")
	for _, r := range checks.Rules() {
		// The anchor is what SARIF's helpUri points at.
		fmt.Fprintf(&b, "| <a id=\"%s\"></a>[%s](fixtures/rules/%s/) | %s | %s | %s |\n", report.RuleAnchor(r.ID), r.ID, r.ID, r.Severity, r.Scope(), cell.Replace(r.Summary))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
