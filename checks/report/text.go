package report

import (
	"bufio"
	"fmt"
	"io"

	"github.com/fatih/color"

	"github.com/idemlint/idemlint/checks"
)

// Text is the human format: one "file:line:col: severity RULE message" line
// per finding, then a summary line.
type Text struct {
	Color bool
}

// Format implements Formatter.
func (t Text) Format(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	paint := func(c *color.Color, s string) string {
		if !t.Color {
			return s
		}
		c.EnableColor()
		return c.Sprint(s)
	}
	errC, warnC, dimC, boldC := color.New(color.FgRed, color.Bold), color.New(color.FgYellow, color.Bold), color.New(color.Faint), color.New(color.Bold)
	for _, f := range r.Findings {
		loc := f.File
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Column)
		}
		sev := paint(warnC, f.Severity.String())
		if f.Severity == checks.Error {
			sev = paint(errC, f.Severity.String())
		}
		fmt.Fprintf(bw, "%s: %s %s %s\n", paint(boldC, loc), sev, paint(dimC, f.Rule), f.Message)
	}
	errs, warns := checks.Count(r.Findings)
	fmt.Fprintf(bw, "%s checked, %s, %s\n", plural(r.Files, "file"), plural(errs, "error"), plural(warns, "warning"))
	return bw.Flush()
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
