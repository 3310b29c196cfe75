package report

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/idemlint/idemlint/checks"
)

// maxMarkdownRows bounds the findings table: GitHub refuses a job summary
// larger than 1 MiB, which a few thousand rows of long messages reach.
const maxMarkdownRows = 1000

// Markdown writes GitHub-flavoured Markdown for a job summary
// ($GITHUB_STEP_SUMMARY) or a pull-request comment: the counts, then every
// finding in a table. GitHub shows only 10 annotations of each severity
// per step; the summary shows them all.
type Markdown struct{}

// Format implements Formatter.
func (Markdown) Format(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	errs, warns := checks.Count(r.Findings)
	fmt.Fprintln(bw, "### idemlint")
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "| files checked | errors | warnings | unreadable | skipped: not boundary documents |")
	fmt.Fprintln(bw, "|---:|---:|---:|---:|---:|")
	fmt.Fprintf(bw, "| %d | %d | %d | %d | %d |\n", r.Files, errs, warns, r.Unreadable, r.NotBoundary)
	if len(r.Findings) == 0 {
		return bw.Flush()
	}
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, "| severity | rule | location | message |")
	fmt.Fprintln(bw, "|---|---|---|---|")
	for i, f := range r.Findings {
		if i == maxMarkdownRows {
			fmt.Fprintf(bw, "\n%s not shown: the SARIF log and `idemlint check` list every finding.\n", Plural(len(r.Findings)-i, "more finding"))
			break
		}
		loc := filepath.ToSlash(f.File)
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d:%d", loc, f.Line, f.Column)
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", f.Severity, f.Rule, markdownCode(loc), markdownCell(f.Message))
	}
	return bw.Flush()
}

// markdownCell keeps text in one table cell: a "|" would end the cell and
// a newline the row; "<" and "&" would start HTML.
var markdownCell = strings.NewReplacer("|", `\|`, "\r", " ", "\n", " ", "<", "&lt;", "&", "&amp;", "`", "\\`", "*", `\*`, "_", `\_`).Replace

// markdownCode writes s as inline code, which shows a path as it is; a "|"
// still ends the cell inside code, and a backtick would end the code.
func markdownCode(s string) string {
	return "`" + strings.NewReplacer("|", `\|`, "`", "'", "\n", " ").Replace(s) + "`"
}
