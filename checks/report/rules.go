package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/idemlint/idemlint/checks"
)

// RuleFormats are the formats WriteRules writes, sorted.
var RuleFormats = []string{"json", "markdown", "text"}

// WriteRules lists rules, sorted by id, in format (one of RuleFormats)
// for "idemlint rules": text, an aligned table of id, severity, scope and
// summary; json, an array of objects with id, name, severity,
// cross_document and summary; markdown, the rule table of docs/rules.md.
func WriteRules(w io.Writer, rules checks.Rules, format string) error {
	rules = rules.Sorted()
	switch format {
	case "text":
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSEVERITY\tSCOPE\tSUMMARY")
		for _, r := range rules {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Severity, r.Scope(), r.Summary)
		}
		return tw.Flush()
	case "json":
		return rulesJSON(w, rules)
	case "markdown":
		return rulesMarkdown(w, rules)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(RuleFormats, ", "))
}

func rulesJSON(w io.Writer, rules checks.Rules) error {
	type rule struct {
		ID            string          `json:"id"`
		Name          string          `json:"name"`
		Severity      checks.Severity `json:"severity"`
		CrossDocument bool            `json:"cross_document"`
		Summary       string          `json:"summary"`
	}
	out := []rule{}
	for _, r := range rules {
		out = append(out, rule{r.ID, r.Name, r.Severity, r.CrossDocument(), r.Summary})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// rulesMarkdown writes the rule table of docs/rules.md; ids link to the
// fixtures relative to that file.
func rulesMarkdown(w io.Writer, rules checks.Rules) error {
	cell := strings.NewReplacer("|", `\|`)
	var b strings.Builder
	b.WriteString("| Rule | Severity | Scope | Requires |\n|---|---|---|---|\n")
	for _, r := range rules {
		// The anchor is what SARIF's helpUri points at.
		fmt.Fprintf(&b, "| <a id=\"%s\"></a>[%s](../fixtures/rules/%s/) | %s | %s | %s |\n", RuleAnchor(r.ID), r.ID, r.ID, r.Severity, r.Scope(), cell.Replace(r.Summary))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
