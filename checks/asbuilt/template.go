package asbuilt

import (
	"bytes"
	"errors"
	"unicode/utf8"
)

// errTemplate is a Helm chart's or another Go template's file: its
// actions are not YAML, and what it renders to is what a cluster holds.
var errTemplate = errors.New("a template, not YAML: a Go template action ({{ ... }}) stands outside a YAML string; render it first (helm template, kustomize build) and give idemlint what it renders to")

// templateAction returns the place of the first Go template action
// ("{{") of data that stands outside a YAML string: not in a comment, a
// quoted scalar or a block scalar ("|", ">"), where a template's text is
// the value itself. It reads the text, not the YAML (a template is
// rarely valid YAML), so its strings are those a line shows: quotes that
// open a value, and the indented lines of a block scalar.
func templateAction(data []byte) (line, column int, ok bool) {
	var quote byte    // the open quote of a scalar that spans lines
	blockIndent := -1 // the indentation of the key whose block scalar goes on
	n := 0
	for text := range bytes.Lines(data) {
		n++
		text = bytes.TrimRight(text, "\r\n")
		indent := len(text) - len(bytes.TrimLeft(text, " "))
		if blockIndent >= 0 {
			if len(bytes.TrimSpace(text)) == 0 || indent > blockIndent {
				continue // the block scalar's text
			}
			blockIndent = -1
		}
		last := byte(' ') // the character before i, outside a string
		for i := 0; i < len(text); i++ {
			c := text[i]
			switch {
			case quote == '\'':
				if c == '\'' {
					if i+1 < len(text) && text[i+1] == '\'' {
						i++ // '' is a quote inside the string
						continue
					}
					quote = 0
				}
				continue
			case quote == '"':
				if c == '\\' {
					i++
				} else if c == '"' {
					quote = 0
				}
				continue
			case c == '#' && (last == ' ' || last == '\t'):
				i = len(text) // a comment
				continue
			case (c == '\'' || c == '"') && bytes.IndexByte([]byte(" \t-:[{,"), last) >= 0:
				quote = c
			case c == '{' && i+1 < len(text) && text[i+1] == '{':
				return n, utf8.RuneCount(text[:i]) + 1, true
			}
			last = c
		}
		if quote == 0 && startsBlock(text) {
			blockIndent = indent
		}
	}
	return 0, 0, false
}

// startsBlock reports whether a line ends with a block scalar's header:
// "key: |", "- >-", "key: |2+" (a comment may follow).
func startsBlock(text []byte) bool {
	if i := bytes.Index(text, []byte(" #")); i >= 0 {
		text = text[:i]
	}
	text = bytes.TrimRight(text, " \t")
	i := len(text)
	for i > 0 && (text[i-1] == '-' || text[i-1] == '+' || '0' <= text[i-1] && text[i-1] <= '9') {
		i--
	}
	if i == 0 || (text[i-1] != '|' && text[i-1] != '>') {
		return false
	}
	before := bytes.TrimRight(text[:i-1], " \t")
	return len(before) == 0 || before[len(before)-1] == ':' || before[len(before)-1] == '-'
}
