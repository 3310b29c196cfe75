package jsontree

import (
	"sort"
	"unicode/utf8"
)

// Position maps byte offsets of a source to 1-based lines and columns.
// Columns count Unicode code points, so a column matches what an editor
// shows for non-ASCII text. The line table is built on first use: most
// files produce no finding and never pay for it.
type Position struct {
	src   string
	lines []int // byte offset of the start of each line
	ascii bool  // no multi-byte characters: columns are byte distances
}

// NewPosition returns a Position over src.
func NewPosition(src string) *Position { return &Position{src: src} }

// Source returns the text positions are computed in.
func (p *Position) Source() string { return p.src }

// At returns the line and column of the byte at off.
func (p *Position) At(off int) (line, col int) {
	if p.lines == nil {
		p.lines = append(p.lines, 0)
		p.ascii = true
		for i := 0; i < len(p.src); i++ {
			switch c := p.src[i]; {
			case c == '\n':
				p.lines = append(p.lines, i+1)
			case c >= utf8.RuneSelf:
				p.ascii = false
			}
		}
	}
	off = max(0, min(off, len(p.src)))
	l := sort.Search(len(p.lines), func(i int) bool { return p.lines[i] > off }) - 1
	if p.ascii {
		return l + 1, off - p.lines[l] + 1
	}
	return l + 1, utf8.RuneCountInString(p.src[p.lines[l]:off]) + 1
}
