package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Snippet writes the lines of text within context lines of line,
// numbered, marking line with ">" and column with a caret below it: the
// source under a finding ("idemlint check" on a terminal) and around an
// example ("idemlint explain"). Lines and columns are 1-based, columns in
// code points; a line beyond the text shows its last line.
func Snippet(w io.Writer, text string, line, column, context int) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	line = min(max(line, 1), len(lines))
	lo, hi := max(1, line-context), min(len(lines), line+context)
	width := len(strconv.Itoa(hi))
	for n := lo; n <= hi; n++ {
		src := strings.ToValidUTF8(strings.TrimSuffix(lines[n-1], "\r"), "\uFFFD")
		marker := " "
		if n == line {
			marker = ">"
		}
		fmt.Fprintf(w, "  %s %*d | %s\n", marker, width, n, src)
		if n == line && column > 0 {
			// Keep tabs so the caret lines up under the column.
			var pad strings.Builder
			for i, r := range []rune(src) {
				if i >= column-1 {
					break
				}
				if r == '\t' {
					pad.WriteRune('\t')
				} else {
					pad.WriteByte(' ')
				}
			}
			fmt.Fprintf(w, "    %*s | %s^\n", width, "", pad.String())
		}
	}
}
