package report

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// GitHub writes GitHub Actions workflow commands, which the runner turns
// into annotations on the pull request's changed lines:
//
//	::error file=F,line=L,col=C,title=IDLnnn::message
//
// then the summary line, which shows in the job log. Warnings become
// ::warning; a finding without a position names the file only.
type GitHub struct{}

// Format implements Formatter.
func (GitHub) Format(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	for _, f := range r.Findings {
		props := []string{"file=" + escapeProperty(filepath.ToSlash(f.File))}
		if f.Line > 0 {
			props = append(props, fmt.Sprintf("line=%d", f.Line), fmt.Sprintf("col=%d", f.Column))
		}
		props = append(props, "title="+escapeProperty(f.Rule))
		fmt.Fprintf(bw, "::%s %s::%s\n", f.Severity, strings.Join(props, ","), escapeData(f.Message))
	}
	fmt.Fprintln(bw, summary(r))
	return bw.Flush()
}

// The escaping of the runner's command parser (actions/toolkit, command.ts):
// a message must not end the command early with a newline, and a property
// value must not contain the separators of the property list either.
var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return dataEscaper.Replace(s) }
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
