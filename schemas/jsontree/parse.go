package jsontree

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds nesting so hostile input cannot exhaust the stack.
const MaxDepth = 1000

// MaxValues bounds the JSON values of one document. A boundary document
// holds a few hundred; without a limit an 8 MiB file of small values (four
// million of them) costs gigabytes of tree.
const MaxValues = 2_000_000

// maxDuplicateReports bounds duplicate-key problems per file: past a
// hundred, more lines help nobody and a hostile file could print millions.
const maxDuplicateReports = 100

// Problem is one way the source is not a valid boundary JSON text.
type Problem struct {
	Offset       int    // byte offset the problem is reported at
	Line, Column int    // the same place as a person counts it (see Position)
	Pointer      string // JSON Pointer of the value concerned ("" at top level)
	Message      string
}

// Parse parses src, which must hold exactly one JSON object. It returns the
// root (nil when the text cannot be parsed at all) and every problem found:
// a fatal syntax problem ends parsing, while a byte order mark and
// duplicate names are reported and parsing goes on so the rest of the
// document can still be checked.
//
// src is a string so that strings without escapes can be substrings of it
// at no cost; callers convert the file once and share it with Position.
func Parse(src string) (*Node, []Problem) { return parse(src, MaxValues) }

// ParseValue is Parse for a text holding any one JSON value, not only an
// object: a value kept as text, such as an example request body.
func ParseValue(src string) (*Node, []Problem) {
	return parseValue(src, MaxValues, true)
}

// parse is Parse with a limit on the number of values, which tests lower to
// exercise it on small inputs.
func parse(src string, maxValues int) (*Node, []Problem) { return parseValue(src, maxValues, false) }

// parseValue is parse, taking any top-level value when anyValue is set.
func parseValue(src string, maxValues int, anyValue bool) (*Node, []Problem) {
	p := parsers.Get().(*parser)
	defer p.release()
	return p.parse(src, maxValues, anyValue, nil)
}

// A Parser parses one document after another into the same memory: the
// tree Parse returns is valid only until the next call. A check's workers
// parse thousands of files whose trees live only while each goes through
// its own stages, and building a new tree per file was a quarter of what a
// check allocated (and so of its garbage collection).
type Parser struct {
	p    parser
	tree tree
}

// tree is the memory of a built tree, kept for reuse.
type tree struct {
	nodes   []Node
	members []Member
	items   []*Node
}

// Parse is the package's Parse, into p's memory. The previous tree must no
// longer be used: its nodes are overwritten.
func (p *Parser) Parse(src string) (*Node, []Problem) {
	root, problems := p.p.parse(src, MaxValues, false, &p.tree)
	if !p.p.reset() {
		// A hostile document grew the scratch beyond what is worth
		// keeping; so did its tree.
		p.p, p.tree = parser{}, tree{}
	}
	return root, problems
}

// parse parses src with p, building the tree into reuse when it is not nil
// (else into new memory).
func (p *parser) parse(src string, maxValues int, anyValue bool, reuse *tree) (*Node, []Problem) {
	if len(src) > math.MaxInt32 {
		// Scratch offsets are 32-bit; no file this large is read anyway.
		return nil, []Problem{{Line: 1, Column: 1, Message: "file is larger than 2 GiB; a boundary document is a few KB"}}
	}
	p.s, p.maxValues, p.anyValue = src, maxValues, anyValue
	p.reserve()
	if strings.HasPrefix(p.s, "\uFEFF") {
		p.problems = append(p.problems, Problem{Message: "file starts with a UTF-8 byte order mark; JSON text must not (RFC 8259, 8.1): remove it"})
		p.i = 3
	}
	var root *Node
	if rootIdx, err := p.document(); err != nil {
		p.problems = append(p.problems, *err)
	} else {
		if reuse == nil {
			reuse = &tree{}
		}
		root = p.build(rootIdx, reuse)
	}
	if len(p.problems) == 0 {
		return root, nil
	}
	problems := slices.Clone(p.problems)
	for i := range problems {
		problems[i].Line, problems[i].Column = p.position().At(problems[i].Offset)
	}
	return root, problems
}

// A parser builds the tree in scratch slices that refer to nodes by index
// and are reused from one document to the next; build then copies the
// result into three exactly sized arrays (nodes, members, items). A
// document so costs three allocations plus its escaped strings, and keeps
// no slack while its rules run: the workers of a check parse thousands of
// files, and allocation is much of their cost. The scratch holds no
// pointers (text is a span of the source or an index into escaped), so the
// garbage collector never scans it, and a node takes 32 bytes.
type parser struct {
	s         string
	i         int
	depth     int
	maxValues int
	anyValue  bool // ParseValue: the top level need not be an object
	problems  []Problem
	dups      int       // duplicate keys reported so far
	line      *Position // built only when there is a problem to place

	nodes   []scratchNode
	members []scratchMember // members of closed objects, grouped per object
	items   []int32         // elements of closed arrays, grouped per array
	openM   []scratchMember // stack of the members of objects still open
	openI   []int32         // stack of the elements of arrays still open
	escaped []string        // decoded strings that had escapes
}

type scratchNode struct {
	offset int32
	text   text  // strings and numbers
	parent int32 // -1 for the root
	// at is where the node is under its parent (see slot): a duplicate's
	// pointer is computed from it, since a value a later duplicate
	// replaced is not in its parent's members any more.
	at    int32
	first int32 // containers: index of the first member or element
	count int32 // containers: number of members or elements
	kind  Kind
	truth bool
}

type scratchMember struct {
	key       text
	keyOffset int32
	value     int32
}

// text is a decoded string or a number's literal: the span of the source
// from start of length n, or, when n is -1, escaped[start].
type text struct{ start, n int32 }

func (p *parser) text(t text) string {
	if t.n < 0 {
		return p.escaped[t.start]
	}
	return p.s[t.start : t.start+t.n]
}

var parsers = sync.Pool{New: func() any { return new(parser) }}

// release empties p and returns it to the pool, unless a hostile document
// grew its scratch beyond what is worth keeping.
func (p *parser) release() {
	if p.reset() {
		parsers.Put(p)
	}
}

// reset empties p for the next document, keeping its scratch memory, and
// reports whether that memory is worth keeping.
func (p *parser) reset() bool {
	if cap(p.nodes) > 1<<16 || cap(p.members) > 1<<16 || cap(p.items) > 1<<16 {
		return false
	}
	// Clear the strings so the scratch does not pin the last document.
	clear(p.escaped)
	*p = parser{nodes: p.nodes[:0], members: p.members[:0], items: p.items[:0], openM: p.openM[:0], openI: p.openI[:0], problems: p.problems[:0], escaped: p.escaped[:0]}
	return true
}

// reserve sizes the node scratch for the most values the source can hold,
// up to the limit: a large document then costs one allocation instead of
// regrowing, where every regrowth leaves garbage the size of all before it.
// Every value but the root follows a '[', a ':' or a ','; counting them is
// a fast scan, and overcounts only by those inside strings and by a comma
// before each member's ':'.
func (p *parser) reserve() {
	most := 1 + strings.Count(p.s, "[") + strings.Count(p.s, ":") + strings.Count(p.s, ",")
	p.nodes = slices.Grow(p.nodes, min(most, p.maxValues))
}

// slot is where a value being parsed goes: under which node, and where in
// it: the byte offset of the member's key in an object, the index in an
// array. A node knows it from the start, so that a duplicate found deep
// inside it can already name its JSON Pointer.
type slot struct {
	parent int32 // -1 for the root
	at     int32
}

// newNode adds a value of kind starting at off, unless it is one too many.
func (p *parser) newNode(kind Kind, off int, at slot) (int32, *Problem) {
	if len(p.nodes) >= p.maxValues {
		return 0, &Problem{Offset: off, Pointer: p.pointer(at), Message: fmt.Sprintf(
			"more than %d JSON values in one file; a boundary document holds a few hundred: split the file or remove the bulk data", p.maxValues)}
	}
	p.nodes = append(p.nodes, scratchNode{kind: kind, offset: int32(off), parent: at.parent, at: at.at})
	return int32(len(p.nodes) - 1), nil
}

// build turns the scratch tree into Nodes in t, growing its arrays to the
// exact size when they are too small, and returns the root.
func (p *parser) build(root int32, t *tree) *Node {
	t.nodes = resize(t.nodes, len(p.nodes))
	t.members = resize(t.members, len(p.members))
	t.items = resize(t.items, len(p.items))
	nodes, members, items := t.nodes, t.members, t.items
	for i, sn := range p.nodes {
		n := &nodes[i]
		*n = Node{Kind: sn.kind, True: sn.truth, Offset: int(sn.offset)}
		if sn.kind == String || sn.kind == Number {
			n.Text = p.text(sn.text)
		}
		if sn.parent >= 0 {
			n.parent = &nodes[sn.parent]
		}
		if sn.count == 0 {
			continue
		}
		end := sn.first + sn.count
		if sn.kind == Object {
			n.Members = members[sn.first:end:end]
		} else {
			n.Items = items[sn.first:end:end]
		}
	}
	for i, m := range p.members {
		members[i] = Member{Key: p.text(m.key), KeyOffset: int(m.keyOffset), Value: &nodes[m.value]}
	}
	for i, v := range p.items {
		items[i] = &nodes[v]
	}
	return &nodes[root]
}

// resize returns s with length n: s itself when it has the room, else a
// new array of exactly n.
func resize[T any](s []T, n int) []T {
	if n == 0 {
		return s[:0]
	}
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

func (p *parser) fail(off int, format string, args ...any) *Problem {
	return &Problem{Offset: off, Message: fmt.Sprintf(format, args...)}
}

func (p *parser) document() (int32, *Problem) {
	p.skipSpace()
	if err := p.noComment(); err != nil {
		return 0, err
	}
	if p.i >= len(p.s) {
		return 0, p.fail(p.i, "file is empty: a boundary document is one JSON object")
	}
	start := p.i
	root, err := p.value(slot{parent: -1})
	if err != nil {
		return 0, err
	}
	if k := p.nodes[root].kind; k != Object && !p.anyValue {
		return 0, p.fail(start, "top-level value is %s %s; a boundary document must be one JSON object", article(k), k)
	}
	p.skipSpace()
	if err := p.noComment(); err != nil {
		return 0, err
	}
	if p.i < len(p.s) {
		return 0, p.fail(p.i, "unexpected %s after the top-level object; a file holds exactly one JSON object", p.describe(p.i))
	}
	return root, nil
}

func article(k Kind) string {
	if k == Array || k == Object {
		return "an"
	}
	return "a"
}

func (p *parser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// noComment names comments explicitly: they are the most common reason a
// hand-edited JSON file is rejected.
func (p *parser) noComment() *Problem {
	if p.i+1 < len(p.s) && p.s[p.i] == '/' && (p.s[p.i+1] == '/' || p.s[p.i+1] == '*') {
		return p.fail(p.i, "comments are not allowed in JSON; remove it (put notes in an \"x-\" field)")
	}
	return nil
}

// describe names the input at off for an error message.
func (p *parser) describe(off int) string {
	if off >= len(p.s) {
		return "end of file"
	}
	r, size := utf8.DecodeRuneInString(p.s[off:])
	switch {
	case r == utf8.RuneError && size <= 1:
		return fmt.Sprintf("byte 0x%02x (not valid UTF-8)", p.s[off])
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf("control character U+%04X", r)
	default:
		return fmt.Sprintf("character %q", r)
	}
}

// value parses one value and returns its index.
func (p *parser) value(at slot) (int32, *Problem) {
	if err := p.noComment(); err != nil {
		return 0, err
	}
	if p.i >= len(p.s) {
		return 0, p.fail(p.i, "unexpected end of file, expected a value")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(at)
	case c == '[':
		return p.array(at)
	case c == '"':
		off := p.i
		s, err := p.str()
		if err != nil {
			return 0, err
		}
		n, err := p.newNode(String, off, at)
		if err != nil {
			return 0, err
		}
		p.nodes[n].text = s
		return n, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(at)
	case c == 't':
		return p.literal(at, "true", Bool, true)
	case c == 'f':
		return p.literal(at, "false", Bool, false)
	case c == 'n':
		return p.literal(at, "null", Null, false)
	case c == '\'':
		return 0, p.fail(p.i, "strings must be in double quotes, not single quotes")
	case c == 'N' || c == 'I':
		return 0, p.fail(p.i, "NaN and Infinity are not JSON numbers")
	default:
		return 0, p.fail(p.i, "unexpected %s, expected a value", p.describe(p.i))
	}
}

func (p *parser) literal(at slot, word string, kind Kind, truth bool) (int32, *Problem) {
	if !strings.HasPrefix(p.s[p.i:], word) {
		return 0, p.fail(p.i, "invalid literal; expected %s", word)
	}
	n, err := p.newNode(kind, p.i, at)
	if err != nil {
		return 0, err
	}
	p.nodes[n].truth = truth
	p.i += len(word)
	return n, nil
}

func (p *parser) enter(off int) *Problem {
	p.depth++
	if p.depth > MaxDepth {
		return p.fail(off, "nesting is deeper than %d levels", MaxDepth)
	}
	return nil
}

func (p *parser) object(at slot) (int32, *Problem) {
	n, err := p.newNode(Object, p.i, at)
	if err != nil {
		return 0, err
	}
	off := p.i
	if err := p.enter(off); err != nil {
		return 0, err
	}
	p.i++ // '{'
	start := len(p.openM)
	var index map[string]int // built only for large objects, to stay linear
	for first := true; ; first = false {
		p.skipSpace()
		if err := p.noComment(); err != nil {
			return 0, err
		}
		if p.i >= len(p.s) {
			return 0, p.fail(p.i, "unexpected end of file, expected '}' to close the object at %s", p.where(off))
		}
		if p.s[p.i] == '}' {
			if !first {
				return 0, p.fail(p.i, "trailing comma before '}'; remove the comma")
			}
			break
		}
		if p.s[p.i] != '"' {
			if p.s[p.i] == '\'' {
				return 0, p.fail(p.i, "object keys must be in double quotes, not single quotes")
			}
			return 0, p.fail(p.i, "unexpected %s, expected a double-quoted object key", p.describe(p.i))
		}
		keyOff := p.i
		keyText, err := p.str()
		if err != nil {
			return 0, err
		}
		key := p.text(keyText)
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return 0, p.fail(p.i, "unexpected %s, expected ':' after object key %q", p.describe(p.i), key)
		}
		p.i++
		p.skipSpace()
		v, err := p.value(slot{parent: n, at: int32(keyOff)})
		if err != nil {
			return 0, err
		}
		own := p.openM[start:]
		dup := -1
		if index != nil {
			if j, ok := index[key]; ok {
				dup = j
			}
		} else {
			for j := range own {
				if p.text(own[j].key) == key {
					dup = j
					break
				}
			}
		}
		m := scratchMember{key: keyText, keyOffset: int32(keyOff), value: v}
		if dup >= 0 {
			p.duplicate(key, slot{parent: n, at: int32(keyOff)}, int(own[dup].keyOffset))
			own[dup] = m
		} else {
			p.openM = append(p.openM, m)
			if index != nil {
				index[key] = len(p.openM) - 1 - start
			} else if len(p.openM)-start > 16 {
				index = make(map[string]int, 32)
				for j, m := range p.openM[start:] {
					index[p.text(m.key)] = j
				}
			}
		}
		p.skipSpace()
		if err := p.noComment(); err != nil {
			return 0, err
		}
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			break
		}
		if p.i >= len(p.s) {
			return 0, p.fail(p.i, "unexpected end of file, expected ',' or '}' in the object at %s", p.where(off))
		}
		return 0, p.fail(p.i, "unexpected %s, expected ',' or '}' after the value of %q", p.describe(p.i), key)
	}
	p.i++ // '}'
	p.depth--
	p.nodes[n].first, p.nodes[n].count = int32(len(p.members)), int32(len(p.openM)-start)
	p.members = append(p.members, p.openM[start:]...)
	p.openM = p.openM[:start]
	return n, nil
}

// duplicate reports key, the member in slot at, as a repeat of the one at
// firstOff.
func (p *parser) duplicate(key string, at slot, firstOff int) {
	p.dups++
	msg := fmt.Sprintf("duplicate key %q (first at %s); JSON parsers disagree on which one wins: keep one", key, p.where(firstOff))
	switch {
	case p.dups == maxDuplicateReports+1:
		msg = fmt.Sprintf("more than %d duplicate keys; further ones are not reported", maxDuplicateReports)
	case p.dups > maxDuplicateReports:
		return
	}
	p.problems = append(p.problems, Problem{Offset: int(at.at), Pointer: p.pointer(at), Message: msg})
}

// pointer returns the JSON Pointer of the value in slot at.
func (p *parser) pointer(at slot) string {
	var segs []string
	for at.parent >= 0 {
		if p.nodes[at.parent].kind == Array {
			segs = append(segs, strconv.Itoa(int(at.at)))
		} else {
			segs = append(segs, EscapePointer(p.keyAt(int(at.at))))
		}
		parent := p.nodes[at.parent]
		at = slot{parent: parent.parent, at: parent.at}
	}
	slices.Reverse(segs)
	if len(segs) == 0 {
		return ""
	}
	return "/" + strings.Join(segs, "/")
}

func (p *parser) array(at slot) (int32, *Problem) {
	n, err := p.newNode(Array, p.i, at)
	if err != nil {
		return 0, err
	}
	off := p.i
	if err := p.enter(off); err != nil {
		return 0, err
	}
	p.i++ // '['
	start := len(p.openI)
	for first := true; ; first = false {
		p.skipSpace()
		if err := p.noComment(); err != nil {
			return 0, err
		}
		if p.i >= len(p.s) {
			return 0, p.fail(p.i, "unexpected end of file, expected ']' to close the array at %s", p.where(off))
		}
		if p.s[p.i] == ']' {
			if !first {
				return 0, p.fail(p.i, "trailing comma before ']'; remove the comma")
			}
			break
		}
		v, err := p.value(slot{parent: n, at: int32(len(p.openI) - start)})
		if err != nil {
			return 0, err
		}
		p.openI = append(p.openI, v)
		p.skipSpace()
		if err := p.noComment(); err != nil {
			return 0, err
		}
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == ']' {
			break
		}
		if p.i >= len(p.s) {
			return 0, p.fail(p.i, "unexpected end of file, expected ',' or ']' in the array at %s", p.where(off))
		}
		return 0, p.fail(p.i, "unexpected %s, expected ',' or ']' in an array", p.describe(p.i))
	}
	p.i++ // ']'
	p.depth--
	p.nodes[n].first, p.nodes[n].count = int32(len(p.items)), int32(len(p.openI)-start)
	p.items = append(p.items, p.openI[start:]...)
	p.openI = p.openI[:start]
	return n, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *parser) number(at slot) (int32, *Problem) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
		if p.i < len(p.s) && isDigit(p.s[p.i]) {
			return 0, p.fail(start, "numbers must not have leading zeros")
		}
	case p.i < len(p.s) && isDigit(p.s[p.i]):
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
	default:
		if strings.HasPrefix(p.s[p.i:], "Infinity") {
			return 0, p.fail(start, "NaN and Infinity are not JSON numbers")
		}
		return 0, p.fail(start, "invalid number: expected a digit after '-'")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if p.i >= len(p.s) || !isDigit(p.s[p.i]) {
			return 0, p.fail(start, "invalid number: expected a digit after '.'")
		}
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if p.i >= len(p.s) || !isDigit(p.s[p.i]) {
			return 0, p.fail(start, "invalid number: expected a digit in the exponent")
		}
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
	}
	n, err := p.newNode(Number, start, at)
	if err != nil {
		return 0, err
	}
	p.nodes[n].text = text{int32(start), int32(p.i - start)}
	return n, nil
}

// str parses a string at p.i. Strings without escapes are spans of the
// source, so they cost no allocation.
func (p *parser) str() (text, *Problem) {
	start := p.i
	p.i++ // opening quote
	for i := p.i; i < len(p.s); {
		c := p.s[i]
		switch {
		case c == '"':
			p.i = i + 1
			return text{int32(start + 1), int32(i - start - 1)}, nil
		case c == '\\':
			p.i = i
			s, err := p.escapedStr(start)
			if err != nil {
				return text{}, err
			}
			p.escaped = append(p.escaped, s)
			return text{int32(len(p.escaped) - 1), -1}, nil
		case c < 0x20:
			return text{}, p.fail(i, "control character U+%04X must be escaped in a string", c)
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRuneInString(p.s[i:])
			if r == utf8.RuneError && size <= 1 {
				return text{}, p.fail(i, "invalid UTF-8 byte 0x%02x in a string", c)
			}
			i += size
		}
	}
	return text{}, p.fail(start, "unterminated string: no closing '\"' before end of file")
}

// keyAt decodes again the object key that starts at off, for a pointer in
// a problem: the scratch keeps where keys are, not what they say.
func (p *parser) keyAt(off int) string {
	i, escaped := p.i, len(p.escaped)
	p.i = off
	t, _ := p.str() // it parsed before
	key := p.text(t)
	p.i, p.escaped = i, p.escaped[:escaped]
	return key
}

func (p *parser) escapedStr(start int) (string, *Problem) {
	var b strings.Builder
	b.WriteString(p.s[start+1 : p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", p.fail(p.i, "unterminated escape sequence")
			}
			esc := p.s[p.i+1]
			p.i += 2
			switch esc {
			case '"', '\\', '/':
				b.WriteByte(esc)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, err := p.unicodeEscape()
				if err != nil {
					return "", err
				}
				b.WriteRune(r)
			default:
				return "", p.fail(p.i-2, "invalid escape sequence \\%s in a string", p.describeEscape(esc))
			}
		case c < 0x20:
			return "", p.fail(p.i, "control character U+%04X must be escaped in a string", c)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.i++
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.fail(p.i, "invalid UTF-8 byte 0x%02x in a string", c)
			}
			b.WriteString(p.s[p.i : p.i+size])
			p.i += size
		}
	}
	return "", p.fail(start, "unterminated string: no closing '\"' before end of file")
}

func (p *parser) describeEscape(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("x%02x", c)
	}
	return string(c)
}

// unicodeEscape reads the hex digits after "\u" (p.i is past the 'u') and
// joins surrogate pairs; a lone surrogate is not Unicode text, so it is an
// error rather than a silent U+FFFD.
func (p *parser) unicodeEscape() (rune, *Problem) {
	escOff := p.i - 2
	r1, ok := p.hex4()
	if !ok {
		return 0, p.fail(escOff, "invalid \\u escape: expected four hex digits")
	}
	if !utf16.IsSurrogate(r1) {
		return r1, nil
	}
	if r1 < 0xDC00 && strings.HasPrefix(p.s[p.i:], "\\u") {
		p.i += 2
		if r2, ok := p.hex4(); ok {
			if r := utf16.DecodeRune(r1, r2); r != utf8.RuneError {
				return r, nil
			}
		}
	}
	return 0, p.fail(escOff, "lone surrogate \\u%04x is not valid Unicode", r1)
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

func (p *parser) position() *Position {
	if p.line == nil {
		p.line = NewPosition(p.s)
	}
	return p.line
}

func (p *parser) where(off int) string {
	l, c := p.position().At(off)
	return fmt.Sprintf("line %d, column %d", l, c)
}
