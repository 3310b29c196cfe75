package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"

	"github.com/idemlint/idemlint/checks"
)

// Text is the human format: one "file:line:col: severity RULE message" line
// per finding, then a summary line.
type Text struct {
	Color bool
	// Source, when set, gives the text of a file: each finding with a
	// position is followed by its line, a caret under its column.
	Source func(path string) (string, bool)
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
	related := paint(dimC, "related")
	// Each line is built in one buffer: a run may write a line for each
	// of tens of thousands of files.
	var line []byte
	for _, f := range r.Findings {
		sevC := warnC
		if f.Severity == checks.Error {
			sevC = errC
		}
		if t.Color {
			line = append(line[:0], paint(boldC, location(f))...)
		} else {
			line = appendLocation(line[:0], f.File, f.Line, f.Column)
		}
		line = append(append(line, ": "...), paint(sevC, f.Severity.String())...)
		line = append(append(line, ' '), paint(dimC, f.Rule)...)
		line = append(append(append(line, ' '), f.Message...), '\n')
		bw.Write(line)
		if t.Source != nil && f.Line > 0 {
			if src, ok := t.Source(f.File); ok {
				Snippet(bw, src, f.Line, f.Column, 0)
			}
		}
		for _, rel := range f.Related {
			line = append(append(append(line[:0], "    "...), related...), ' ')
			line = appendLocation(line, rel.File, rel.Line, rel.Column)
			line = append(append(append(line, ": "...), rel.Message...), '\n')
			bw.Write(line)
		}
	}
	fmt.Fprintln(bw, summary(r))
	return bw.Flush()
}

// summary is the last line of the text formats: "4 files checked, 1 error,
// 0 warnings", then how many files could not be read and how many JSON
// files were skipped as no boundary documents, when there are any: a run
// must never look cleaner than what it saw.
func summary(r *Report) string {
	errs, warns := checks.Count(r.Findings)
	line := fmt.Sprintf("%s checked, %s, %s", Plural(r.Files, "file"), Plural(errs, "error"), Plural(warns, "warning"))
	if r.Unreadable > 0 {
		line += fmt.Sprintf(", %d unreadable", r.Unreadable)
	}
	if r.NotBoundary > 0 {
		line += fmt.Sprintf(", %d skipped: not boundary documents", r.NotBoundary)
	}
	return line
}

// Plural counts n of noun in English: "1 file", "2 files", "3 entries".
func Plural(n int, noun string) string {
	switch {
	case n == 1:
		return fmt.Sprintf("1 %s", noun)
	case strings.HasSuffix(noun, "y"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
