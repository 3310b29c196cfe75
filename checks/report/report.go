// Package report writes check results in the output formats idemlint
// supports. Every format is a Formatter; the command picks one by name.
package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/idemlint/idemlint/checks"
)

// Report is everything a formatter may show.
type Report struct {
	Findings []checks.Finding // sorted
	Files    int              // files examined
	// Unreadable files (IDL001) and NotBoundary JSON files skipped: the
	// summary says so, so a green run is never a blind one.
	Unreadable, NotBoundary int
	Rules                   []*checks.Rule // every rule, for formats that carry rule metadata
	Version                 string         // idemlint version, for formats that name the tool
	// Paths are the files examined, for formats that list files without
	// findings too (junit); files with findings are listed anyway.
	Paths []string
	// FailOn is the least severity that fails the check (--fail-on), for
	// formats that show pass or fail (junit); zero means checks.Error.
	FailOn checks.Severity
}

// Formatter writes a report in one format.
type Formatter interface {
	Format(w io.Writer, r *Report) error
}

// Options tune formatters that have presentation choices.
type Options struct {
	Color bool // colour the text format (only on a terminal, never under NO_COLOR)
	// Source, when set, gives the text of a file with findings: the text
	// format then shows the line of each finding with a caret under its
	// column.
	Source func(path string) (string, bool)
}

var formats = map[string]func(Options) Formatter{
	"text":     func(o Options) Formatter { return Text(o) },
	"json":     func(Options) Formatter { return JSON{} },
	"sarif":    func(Options) Formatter { return SARIF{} },
	"junit":    func(Options) Formatter { return JUnit{} },
	"github":   func(Options) Formatter { return GitHub{} },
	"markdown": func(Options) Formatter { return Markdown{} },
}

// New returns the formatter named name.
func New(name string, o Options) (Formatter, error) {
	f, ok := formats[name]
	if !ok {
		return nil, fmt.Errorf("unknown format %q (want %s)", name, strings.Join(Names(), ", "))
	}
	return f(o), nil
}

// Names lists the format names, sorted.
func Names() []string {
	out := make([]string, 0, len(formats))
	for n := range formats {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// location is "file:line:column", or the file alone when the finding has no
// position (an unreadable file).
func location(f checks.Finding) string {
	return string(appendLocation(nil, f.File, f.Line, f.Column))
}

// appendLocation appends the location of file, line and column, as
// location writes it, to dst.
func appendLocation(dst []byte, file string, line, column int) []byte {
	// A name holding a control character is written quoted (Go syntax), so
	// that a crafted file name cannot forge a finding line or send escape
	// sequences to the terminal.
	if strings.ContainsFunc(file, unicode.IsControl) {
		dst = strconv.AppendQuote(dst, file)
	} else {
		dst = append(dst, file...)
	}
	if line == 0 {
		return dst
	}
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, int64(line), 10)
	dst = append(dst, ':')
	return strconv.AppendInt(dst, int64(column), 10)
}
