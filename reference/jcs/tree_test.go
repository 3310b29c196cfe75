package jcs

import (
	"slices"
	"strings"
	"unicode/utf8"
)

type kind uint8

const (
	kNull kind = iota
	kFalse
	kTrue
	kNumber
	kString
	kArray
	kObject
)

// node is one parsed value of the tree.
type node struct {
	kind kind
	// Scalars keep their canonical text (numbers) or unescaped UTF-8
	// (strings) as src[lo:hi], or arena[lo:hi] when inArena is set.
	inArena bool
	// escape marks a string whose unescaped text may hold '"', '\\' or
	// control characters. Strings copied straight from the source cannot,
	// so they are written without an escaping pass.
	escape  bool
	dropped bool // removed by an exclusion pointer
	off     int  // source offset, for error reports
	// Containers hold their children as kids[lo:hi] (arrays) or
	// members[lo:hi] (objects, sorted by name).
	lo, hi int
}

type treeMember struct{ name, val int } // node indices

type parser struct {
	src     []byte
	pos     int
	exact   bool
	depth   int
	padding int // zeros exact mode has added, see maxPadding

	nodes   []node
	arena   []byte       // unescaped strings and reformatted numbers
	kids    []int        // array elements; each array's are contiguous
	members []treeMember // object members; each object's are contiguous
	kstack  []int        // elements of arrays still being parsed
	mstack  []treeMember // members of objects still being parsed
}

// treeCanonicalize is the package's first canonicaliser, kept as the
// straightforward one to test the fast one against: it parses into a tree
// of nodes, drops the excluded ones and serialises the rest. Number
// formatting, string validation and name order are the package's own.
func treeCanonicalize(src []byte, exact bool, exclude []string) ([]byte, error) {
	for _, ptr := range exclude {
		if err := checkPointer(ptr); err != nil {
			return nil, err
		}
	}
	p := &parser{src: src, exact: exact}
	root, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.src) {
		return nil, p.fail("unexpected content after the JSON value")
	}
	for _, ptr := range exclude {
		p.drop(root, ptr)
	}
	return p.write(make([]byte, 0, len(src)), root), nil
}

// fail reports reason at the current position, or end of input when the
// parser ran out of bytes, which is the more useful description.
func (p *parser) fail(reason string) *Error {
	return p.failAt(p.pos, reason)
}

func (p *parser) failAt(off int, reason string) *Error {
	if off >= len(p.src) {
		return &Error{Offset: len(p.src), Reason: "unexpected end of input"}
	}
	return &Error{Offset: off, Reason: reason}
}

func (p *parser) add(n node) int {
	p.nodes = append(p.nodes, n)
	return len(p.nodes) - 1
}

func (p *parser) number() (int, error) {
	start, lo := p.pos, len(p.arena)
	var n number
	if err := scanNumber(p.src, p.pos, &n); err != nil {
		return 0, err
	}
	var err *Error
	if p.arena, err = appendNumber(p.arena, p.src, &n, p.exact, &p.padding); err != nil {
		return 0, err
	}
	p.pos = n.end
	return p.add(node{kind: kNumber, off: start, lo: lo, hi: len(p.arena), inArena: true}), nil
}

func (p *parser) text(n *node) []byte {
	if n.inArena {
		return p.arena[n.lo:n.hi]
	}
	return p.src[n.lo:n.hi]
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or 0 at end of input (0 is
// never valid there, so callers fall into their error branch).
func (p *parser) peek() byte {
	p.skipSpace()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) value() (int, error) {
	switch c := p.peek(); {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.string()
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true", kTrue)
	case c == 'f':
		return p.literal("false", kFalse)
	case c == 'n':
		return p.literal("null", kNull)
	default:
		return 0, p.fail("unexpected character")
	}
}

func (p *parser) literal(word string, k kind) (int, error) {
	end := p.pos + len(word)
	if end > len(p.src) || string(p.src[p.pos:end]) != word {
		return 0, p.fail("invalid literal")
	}
	n := p.add(node{kind: k, off: p.pos})
	p.pos = end
	return n, nil
}

func (p *parser) enter() error {
	if p.depth++; p.depth > MaxDepth {
		return p.fail("nesting deeper than 1000 levels")
	}
	return nil
}

func (p *parser) array() (int, error) {
	start := p.pos
	if err := p.enter(); err != nil {
		return 0, err
	}
	p.pos++ // '['
	base := len(p.kstack)
	if p.peek() == ']' {
		p.pos++
	} else {
		for {
			v, err := p.value()
			if err != nil {
				return 0, err
			}
			p.kstack = append(p.kstack, v)
			c := p.peek()
			if c == ']' {
				p.pos++
				break
			}
			if c != ',' {
				return 0, p.fail("expected ',' or ']' after array element")
			}
			p.pos++
			if p.peek() == ']' {
				return 0, p.fail("trailing comma in array")
			}
		}
	}
	p.depth--
	lo := len(p.kids)
	p.kids = append(p.kids, p.kstack[base:]...)
	p.kstack = p.kstack[:base]
	return p.add(node{kind: kArray, off: start, lo: lo, hi: len(p.kids)}), nil
}

func (p *parser) object() (int, error) {
	start := p.pos
	if err := p.enter(); err != nil {
		return 0, err
	}
	p.pos++ // '{'
	base := len(p.mstack)
	if p.peek() == '}' {
		p.pos++
	} else {
		for {
			if p.peek() != '"' {
				return 0, p.fail("expected string for object member name")
			}
			name, err := p.string()
			if err != nil {
				return 0, err
			}
			if p.peek() != ':' {
				return 0, p.fail("expected ':' after object member name")
			}
			p.pos++
			v, err := p.value()
			if err != nil {
				return 0, err
			}
			p.mstack = append(p.mstack, treeMember{name, v})
			c := p.peek()
			if c == '}' {
				p.pos++
				break
			}
			if c != ',' {
				return 0, p.fail("expected ',' or '}' after object member")
			}
			p.pos++
			if p.peek() == '}' {
				return 0, p.fail("trailing comma in object")
			}
		}
	}
	p.depth--

	ms := p.mstack[base:]
	if off := p.sortMembers(ms); off >= 0 {
		return 0, &Error{Offset: off, Reason: "duplicate object member name"}
	}
	lo := len(p.members)
	p.members = append(p.members, ms...)
	p.mstack = p.mstack[:base]
	return p.add(node{kind: kObject, off: start, lo: lo, hi: len(p.members)}), nil
}

// sortMembers sorts ms by name and returns the offset of a duplicate name,
// or -1. Sorting brings equal names together, so finding them needs no map.
func (p *parser) sortMembers(ms []treeMember) int {
	name := func(m treeMember) []byte { return p.text(&p.nodes[m.name]) }
	dup := func(a, b treeMember) int { return max(p.nodes[a.name].off, p.nodes[b.name].off) }
	if len(ms) > 12 {
		cmp := func(a, b treeMember) int { return compareUTF16(name(a), name(b)) }
		slices.SortFunc(ms, cmp)
		for i := 1; i < len(ms); i++ {
			if cmp(ms[i-1], ms[i]) == 0 {
				return dup(ms[i-1], ms[i])
			}
		}
		return -1
	}
	// Most objects are small: insertion sort, which meets any name equal
	// to the one being inserted as the first that is not greater.
	for i := 1; i < len(ms); i++ {
		x := ms[i]
		xn := name(x)
		j := i
		for ; j > 0; j-- {
			c := compareUTF16(name(ms[j-1]), xn)
			if c == 0 {
				return dup(ms[j-1], x)
			}
			if c < 0 {
				break
			}
			ms[j] = ms[j-1]
		}
		ms[j] = x
	}
	return -1
}

// string parses a string literal. The common case, no escapes, is kept as a
// slice of the source; otherwise the unescaped text goes to the arena.
func (p *parser) string() (int, error) {
	start := p.pos
	s := p.src
	for i := start + 1; i < len(s); {
		for i < len(s)-1 && plain[s[i]] { // stop short: s[i] is read below
			i++
		}
		switch c := s[i]; {
		case c == '"':
			p.pos = i + 1
			return p.add(node{kind: kString, off: start, lo: start + 1, hi: i}), nil
		case c == '\\':
			return p.escapedString(start, i)
		case c < 0x20:
			return 0, p.failAt(i, "control character in string must be escaped")
		case c < utf8.RuneSelf:
			i++
		default:
			size, reason := checkUTF8(s[i:])
			if reason != "" {
				return 0, p.failAt(i, reason)
			}
			i += size
		}
	}
	return 0, p.failAt(len(s), "")
}

// escapedString finishes a string that has an escape at i, unescaping into
// the arena from the string's first byte.
func (p *parser) escapedString(start, i int) (int, error) {
	s := p.src
	lo := len(p.arena)
	p.arena = append(p.arena, s[start+1:i]...)
	for i < len(s) {
		switch c := s[i]; {
		case c == '"':
			p.pos = i + 1
			return p.add(node{kind: kString, off: start, lo: lo, hi: len(p.arena), inArena: true, escape: true}), nil
		case c == '\\':
			r, size, reason := unescape(s[i:])
			if reason != "" {
				return 0, p.failAt(i, reason)
			}
			p.arena = utf8.AppendRune(p.arena, r)
			i += size
		case c < 0x20:
			return 0, p.failAt(i, "control character in string must be escaped")
		case c < utf8.RuneSelf:
			p.arena = append(p.arena, c)
			i++
		default:
			size, reason := checkUTF8(s[i:])
			if reason != "" {
				return 0, p.failAt(i, reason)
			}
			p.arena = append(p.arena, s[i:i+size]...)
			i += size
		}
	}
	return 0, p.failAt(len(s), "")
}

// drop marks the value at the checked pointer ptr as removed, if there is
// one. Lookups ignore earlier drops, so every pointer resolves against the
// original document.
func (p *parser) drop(root int, ptr string) {
	cur := root
	for rest := ptr[1:]; ; {
		tok, next, more := strings.Cut(rest, "/")
		n := &p.nodes[cur]
		switch n.kind {
		case kObject:
			found := -1
			for _, m := range p.members[n.lo:n.hi] {
				if tokenIs(tok, p.text(&p.nodes[m.name])) {
					found = m.val
					break
				}
			}
			if found < 0 {
				return
			}
			cur = found
		case kArray:
			i, ok := arrayIndex(tok)
			if !ok || i >= n.hi-n.lo {
				return // includes "-", the element after the last
			}
			cur = p.kids[n.lo+i]
		default:
			return
		}
		if !more {
			p.nodes[cur].dropped = true
			return
		}
		rest = next
	}
}

// write appends the canonical form of node i to dst.
func (p *parser) write(dst []byte, i int) []byte {
	n := &p.nodes[i]
	switch n.kind {
	case kNull:
		return append(dst, "null"...)
	case kFalse:
		return append(dst, "false"...)
	case kTrue:
		return append(dst, "true"...)
	case kNumber:
		return append(dst, p.text(n)...)
	case kString:
		return p.writeString(dst, n)
	case kArray:
		dst = append(dst, '[')
		sep := false
		for _, k := range p.kids[n.lo:n.hi] {
			if p.nodes[k].dropped {
				continue
			}
			if sep {
				dst = append(dst, ',')
			}
			sep = true
			dst = p.write(dst, k)
		}
		return append(dst, ']')
	default: // kObject
		dst = append(dst, '{')
		sep := false
		for _, m := range p.members[n.lo:n.hi] {
			if p.nodes[m.val].dropped {
				continue
			}
			if sep {
				dst = append(dst, ',')
			}
			sep = true
			dst = p.writeString(dst, &p.nodes[m.name])
			dst = append(dst, ':')
			dst = p.write(dst, m.val)
		}
		return append(dst, '}')
	}
}

// writeString writes a parsed string node; strings the parser saw without
// escapes need none on output either.
func (p *parser) writeString(dst []byte, n *node) []byte {
	s := p.text(n)
	if !n.escape {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	return AppendString(dst, s)
}
