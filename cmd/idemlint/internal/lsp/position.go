package lsp

import (
	"strings"
	"unicode/utf8"

	"github.com/idemlint/idemlint/schemas/jsontree"
)

// An LSP position is a zero-based line and a character offset counted in
// the negotiated encoding: UTF-16 code units unless the client offers
// another. Findings count Unicode code points from 1, as "utf-32" does.
const (
	utf16 = "utf-16"
	utf8e = "utf-8"
	utf32 = "utf-32"
)

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type textRange struct {
	Start position `json:"start"`
	End   position `json:"end"`
}

// units is how many units of encoding r takes.
func units(encoding string, r rune) int {
	switch encoding {
	case utf8e:
		return utf8.RuneLen(r)
	case utf32:
		return 1
	}
	if r >= 0x10000 {
		return 2 // a surrogate pair
	}
	return 1
}

// lineText returns line (1-based) of text without its line break.
func lineText(text string, line int) string {
	for l := 1; l < line; l++ {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			return ""
		}
		text = text[i+1:]
	}
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	return strings.TrimSuffix(text, "\r")
}

// at converts line:column (1-based, columns in code points, as findings
// have them) in text to an LSP position.
func at(text, encoding string, line, column int) position {
	if line < 1 {
		return position{}
	}
	char := 0
	for i, r := range []rune(lineText(text, line)) {
		if i >= column-1 {
			break
		}
		char += units(encoding, r)
	}
	return position{Line: line - 1, Character: char}
}

// atOffset converts a byte offset in text to an LSP position.
func atOffset(text, encoding string, offset int) position {
	line, column := jsontree.NewPosition(text).At(offset)
	return at(text, encoding, line, column)
}

// lineEnd is the LSP position after the last non-blank character of line
// (1-based) of text, where a diagnostic's underline stops.
func lineEnd(text, encoding string, line int) position {
	content := strings.TrimRight(lineText(text, line), " \t,")
	return at(text, encoding, line, utf8.RuneCountInString(content)+1)
}
