package main

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/jsontree"
	"github.com/idemlint/idemlint/fixtures"
)

func newExplainCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "explain RULE",
		Short: "Explain a rule: why it matters, how to fix it, a bad and a good example",
		Long: `Explain prints a rule's id, name, severity and summary, why it matters and how
to fix a finding, then two examples taken from the fixture sets the tests hold
the checker to, so they cannot drift from what "check" does:

  Bad   the lines around the rule's first finding in its first fixture set
        that triggers it, with that finding;
  Good  the same place (the same JSON Pointer) in a near-miss set, one that
        does not trigger the rule.

RULE is an id such as IDL102 (any case); "idemlint rules" lists them.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRuleID,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, ok := checks.Lookup(args[0])
			if !ok {
				return fmt.Errorf(`unknown rule %q; "idemlint rules" lists the rule ids`, args[0])
			}
			ex, err := findExample(fixtures.FS, r.ID)
			if err != nil {
				return err
			}
			return explain(cmd.OutOrStdout(), r, ex)
		},
	}
}

// snippetContext is how many lines an example shows either side of its line.
const snippetContext = 3

// place is a position in a fixture file.
type place struct {
	file      string // path in fixtures.FS
	src       string
	line, col int
}

// example is a rule's bad and good example; either may be missing when the
// rule has no such fixture set.
type example struct {
	finding   string // the bad set's golden line for the finding shown
	bad, good *place
	nearMiss  string // the near-miss set, when it has no file to show as good
}

// goldenLine matches a findings.golden line: "file:line:col: severity ID message".
var goldenLine = regexp.MustCompile(`^(.+):(\d+):(\d+): (?:error|warning) (IDL\d+) `)

// findExample picks the examples of rule id from the fixture sets under
// rules/<id>/ in fsys, in name order: the first set whose golden names the
// rule and whose first finding of it sits at a JSON value that a near-miss
// set (one whose golden does not name the rule) also has, so Good shows
// the same field done right; a finding at the root is a last resort. When
// no pair shares a value, it falls back to the first of each, Good showing
// the same lines of the same file.
func findExample(fsys fs.FS, id string) (example, error) {
	dir := path.Join("rules", id)
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return example{}, nil // a rule without fixtures yet: no examples
	}
	type trigger struct {
		golden string
		at     place
	}
	var triggers []trigger
	var nearMisses []string
	for _, e := range entries {
		set := path.Join(dir, e.Name())
		golden, err := fs.ReadFile(fsys, path.Join(set, fixtures.GoldenName))
		if err != nil {
			continue // not a fixture set
		}
		if g, at, ok := firstFinding(string(golden), id); ok {
			at.file = path.Join(set, at.file)
			src, err := fs.ReadFile(fsys, at.file)
			if err != nil {
				return example{}, fmt.Errorf("fixture %s: %w", at.file, err)
			}
			at.src = string(src)
			triggers = append(triggers, trigger{g, at})
		} else {
			nearMisses = append(nearMisses, set)
		}
	}
	if len(triggers) == 0 {
		return example{}, nil
	}
	goodFile := func(set string, bad place) (place, bool) {
		src, err := fs.ReadFile(fsys, path.Join(set, path.Base(bad.file)))
		return place{file: path.Join(set, path.Base(bad.file)), src: string(src)}, err == nil
	}
	for _, t := range triggers {
		// A finding at the root (a missing top-level section) shows little
		// next to the good file's first line: prefer one at a value.
		ptr, ok := pointerAt(t.at)
		if !ok || ptr == "" {
			continue
		}
		for _, set := range nearMisses {
			if good, ok := goodFile(set, t.at); ok {
				if good.line, good.col, ok = locate(good.src, ptr); ok {
					return example{finding: t.golden, bad: &t.at, good: &good}, nil
				}
			}
		}
	}
	ex := example{finding: triggers[0].golden, bad: &triggers[0].at}
	if len(nearMisses) > 0 {
		if good, ok := goodFile(nearMisses[0], triggers[0].at); ok {
			good.line, good.col = triggers[0].at.line, triggers[0].at.col
			ex.good = &good
		} else {
			ex.nearMiss = nearMisses[0]
		}
	}
	return ex, nil
}

// firstFinding returns the first line of golden reporting rule id, and
// where it is (file relative to the set).
func firstFinding(golden, id string) (string, place, bool) {
	for _, line := range strings.Split(golden, "\n") {
		m := goldenLine.FindStringSubmatch(line)
		if m == nil || m[4] != id {
			continue
		}
		l, _ := strconv.Atoi(m[2])
		c, _ := strconv.Atoi(m[3])
		return line, place{file: m[1], line: l, col: c}, true
	}
	return "", place{}, false
}

// pointerAt returns the JSON Pointer of the value that starts at p, where
// findings are reported; false when p.src does not parse or no value starts
// there (a finding about a key or about syntax).
func pointerAt(p place) (string, bool) {
	root, _ := jsontree.Parse(p.src)
	if root == nil {
		return "", false
	}
	off := offsetOf(p.src, p.line, p.col)
	var walk func(n *jsontree.Node) *jsontree.Node
	walk = func(n *jsontree.Node) *jsontree.Node {
		if n.Offset == off {
			return n // a child never starts where its parent does
		}
		for _, it := range n.Items {
			if found := walk(it); found != nil {
				return found
			}
		}
		for _, m := range n.Members {
			if found := walk(m.Value); found != nil {
				return found
			}
		}
		return nil
	}
	if n := walk(root); n != nil {
		return n.Pointer(), true
	}
	return "", false
}

// locate returns the position of the value at ptr in src, if it exists.
func locate(src, ptr string) (line, col int, ok bool) {
	root, _ := jsontree.Parse(src)
	if root == nil {
		return 0, 0, false
	}
	n := root.Nearest(ptr)
	if n.Pointer() != ptr {
		return 0, 0, false
	}
	line, col = jsontree.NewPosition(src).At(n.Offset)
	return line, col, true
}

// offsetOf is the byte offset of line:col (1-based, columns in code
// points) in src.
func offsetOf(src string, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(src[off:], '\n')
		if i < 0 {
			return len(src)
		}
		off += i + 1
	}
	for c := 1; c < col && off < len(src) && src[off] != '\n'; c++ {
		_, size := utf8.DecodeRuneInString(src[off:])
		off += size
	}
	return off
}

// explain writes the explanation of r with its examples.
func explain(w io.Writer, r *checks.Rule, ex example) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s %s: %s, %s rule\n%s\n\n%s\n", r.ID, r.Name, r.Severity, scope(r), r.Summary, r.Doc)
	if ex.bad == nil {
		fmt.Fprintf(bw, "\nNo examples: fixtures/rules/%s/ has no fixture set that triggers it.\n", r.ID)
		return bw.Flush()
	}
	fmt.Fprintf(bw, "\nBad: fixtures/%s\n  %s\n\n", ex.bad.file, ex.finding)
	writeSnippet(bw, *ex.bad)
	switch {
	case ex.good != nil:
		fmt.Fprintf(bw, "\nGood: fixtures/%s\n\n", ex.good.file)
		writeSnippet(bw, *ex.good)
	case ex.nearMiss != "":
		fmt.Fprintf(bw, "\nGood: the documents of fixtures/%s/\n", ex.nearMiss)
	}
	return bw.Flush()
}

// writeSnippet prints the lines around p, numbered, marking p's line with
// ">" and its column with a caret.
func writeSnippet(w io.Writer, p place) {
	lines := strings.Split(strings.TrimSuffix(p.src, "\n"), "\n")
	line := min(max(p.line, 1), len(lines))
	lo, hi := max(1, line-snippetContext), min(len(lines), line+snippetContext)
	width := len(strconv.Itoa(hi))
	for n := lo; n <= hi; n++ {
		text := strings.ToValidUTF8(strings.TrimSuffix(lines[n-1], "\r"), "\uFFFD")
		marker := " "
		if n == line {
			marker = ">"
		}
		fmt.Fprintf(w, "  %s %*d | %s\n", marker, width, n, text)
		if n == line && p.col > 0 {
			// Keep tabs so the caret lines up under the column.
			var pad strings.Builder
			for i, r := range []rune(text) {
				if i >= p.col-1 {
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
