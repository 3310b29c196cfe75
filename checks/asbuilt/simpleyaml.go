package asbuilt

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v4"
)

// The routing documents of rendered manifests are small and written in
// the plainest YAML: block mappings and sequences, plain or quoted
// words, short flow collections on one line. The YAML library spends
// tens of microseconds on each (a scanner, a parser and a composer, each
// allocating), which made their parse most of what --as-built costs.
// readSimple builds the same nodes for that plain subset directly, and
// says when a document is outside it (anchors, tags, block scalars,
// multi-line values, escapes, tabs, non-ASCII text, JSON written over
// several lines, anything it is not sure of): the library parses those,
// errors included. FuzzSimpleYAML holds it to the library.

// maxSimpleDepth bounds the nesting readSimple follows; deeper
// documents (rare, and bounded by maxDepth) go to the library.
const maxSimpleDepth = 64

// simpleLine is a line of content: not blank, not a comment.
type simpleLine struct {
	text   []byte // from the first character of content
	offset int    // of text in the document
	num    int    // 1-based, in the document
	indent int    // the column of text, 0-based
}

// simpleParser reads a document a line at a time: a hostile document
// costs no more than the nodes it builds before it fails.
type simpleParser struct {
	doc []byte
	// src is the document: the values are its substrings, one copy.
	src string
	// next is the offset of the first line not read, num the lines read.
	next, num int
	// cur is the current line of content, when more; outside is set
	// once a line outside the subset is met.
	cur           simpleLine
	more, outside bool
	marker        int // the line of a "---" starting the document
	depth         int
	// slab holds the nodes, allocated many at a time; made counts them.
	slab []yaml.Node
	made int
	// kids are the children of the collections being parsed, innermost
	// last; a collection's move to kidSlab, its Content, when it ends,
	// so that no Content grows by appending; kidsMade counts those moved.
	kids, kidSlab []*yaml.Node
	kidsMade      int
}

// maxSlab is the nodes of a pooled slab; a document with more takes
// further slabs, a few nodes at a time.
const maxSlab = 256

// node returns a new node of kind and tag at line and column, its other
// fields zero. It is written in place: copying a whole node in writes
// its eight pointers, each behind the collector's write barrier while it
// marks.
func (p *simpleParser) node(kind yaml.Kind, tag string, line, column int) *yaml.Node {
	if len(p.slab) == cap(p.slab) {
		p.slab = make([]yaml.Node, 0, 16)
	}
	p.slab = p.slab[:len(p.slab)+1]
	p.made++
	n := &p.slab[len(p.slab)-1]
	n.Kind, n.Tag, n.Line, n.Column = kind, tag, line, column
	return n
}

// content returns the children pushed on kids from index from, as a
// collection's Content, and pops them.
func (p *simpleParser) content(from int) []*yaml.Node {
	n := len(p.kids) - from
	if n == 0 {
		return nil
	}
	if len(p.kidSlab)+n > cap(p.kidSlab) {
		p.kidSlab = make([]*yaml.Node, 0, max(n, 64))
	}
	start := len(p.kidSlab)
	p.kidSlab = append(p.kidSlab, p.kids[from:]...)
	p.kidsMade += n
	p.kids = p.kids[:from]
	// Full: an append to one Content copies it instead of writing
	// over the next one's.
	return p.kidSlab[start:len(p.kidSlab):len(p.kidSlab)]
}

// simpleSlabs are the first slabs of a parser, and its stack, kept from
// one document to the next: the nodes are dead once the document is read
// (the model copies what it keeps), and allocating them anew was most of
// what reading a file allocated.
type simpleSlabs struct {
	nodes []yaml.Node
	kids  []*yaml.Node
	stack []*yaml.Node
}

var simplePool = sync.Pool{New: func() any {
	return &simpleSlabs{nodes: make([]yaml.Node, 0, maxSlab), kids: make([]*yaml.Node, 0, maxSlab)}
}}

// readSimple calls use with the document node of doc, one YAML document
// (as documents splits a stream), as the YAML library composes and
// resolves it but for comments; false, without calling use, when doc is
// not in the plain subset. The nodes are reused once use returns: use
// must keep none of them.
func readSimple(doc []byte, use func(*yaml.Node)) bool {
	s := simplePool.Get().(*simpleSlabs)
	p := simpleParser{slab: s.nodes[:0], kidSlab: s.kids[:0], kids: s.stack[:0]}
	root, ok := p.parse(doc)
	if ok {
		use(root)
	}
	releaseSimple(s, &p)
	return ok
}

// releaseSimple returns the slabs p parsed into to the pool. A test
// poisons the nodes instead (and drops them), to prove that no reader
// keeps one.
var releaseSimple = func(s *simpleSlabs, p *simpleParser) {
	// Cleared, so that the pool holds no document's text alive.
	clear(s.nodes[:min(p.made, cap(s.nodes))])
	clear(s.kids[:min(p.kidsMade, cap(s.kids))])
	s.stack = p.kids[:0]
	clear(s.stack[:cap(s.stack)])
	simplePool.Put(s)
}

// parse parses doc into the parser's slabs.
func (p *simpleParser) parse(doc []byte) (*yaml.Node, bool) {
	p.doc, p.src = doc, string(doc)
	if p.advance(); !p.more {
		return nil, false
	}
	root, ok := p.block(p.cur.indent)
	if !ok || p.more || p.outside {
		return nil, false
	}
	d := p.node(yaml.DocumentNode, "", root.Line, root.Column)
	d.Content = []*yaml.Node{root}
	if p.marker > 0 {
		d.Line, d.Column = p.marker, 1
	}
	return d, true
}

// advance moves to the next line of content; none (more false) at the
// end of the document or at a line outside the subset.
func (p *simpleParser) advance() {
	p.more = false
	for !p.outside && p.next < len(p.doc) {
		start := p.next
		end := bytes.IndexByte(p.doc[start:], '\n')
		if end < 0 {
			p.next = len(p.doc)
			end = len(p.doc)
		} else {
			end += start
			p.next = end + 1
		}
		line := p.doc[start:end]
		p.num++
		for _, c := range line {
			if c < ' ' || c > '~' {
				p.outside = true // tabs, other line breaks, control and non-ASCII characters
				return
			}
		}
		if p.num == 1 && (marker3(line, "---") || marker3(line, "...")) {
			if line[0] == '.' || !isComment(bytes.TrimLeft(line[3:], " ")) {
				p.outside = true
				return
			}
			p.marker = 1
			continue
		}
		text := bytes.TrimLeft(line, " ")
		switch {
		case isComment(text):
			continue
		case marker3(line, "---") || marker3(line, "..."):
			p.outside = true
			return
		}
		indent := len(line) - len(text)
		p.cur, p.more = simpleLine{text: text, offset: start + indent, num: p.num, indent: indent}, true
		return
	}
}

// marker3 reports whether line is the document marker m, perhaps
// followed by a blank and more.
func marker3(line []byte, m string) bool {
	return bytes.HasPrefix(line, []byte(m)) && (len(line) == 3 || line[3] == ' ')
}

// isComment reports whether text, a line from its first non-blank, holds
// no content.
func isComment(text []byte) bool { return len(text) == 0 || text[0] == '#' }

// block parses the block node whose first line is the current one, at
// column indent.
func (p *simpleParser) block(indent int) (*yaml.Node, bool) {
	if p.depth++; p.depth > maxSimpleDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	if isItem(p.cur.text) {
		return p.sequence(indent)
	}
	return p.mapping(indent)
}

// isItem reports whether text starts an item of a block sequence.
func isItem(text []byte) bool { return text[0] == '-' && (len(text) == 1 || text[1] == ' ') }

// mapping parses a block mapping at column indent.
func (p *simpleParser) mapping(indent int) (*yaml.Node, bool) {
	l := p.cur
	m := p.node(yaml.MappingNode, "!!map", l.num, indent+1)
	from := len(p.kids)
	for p.more && p.cur.indent == indent && !isItem(p.cur.text) {
		l := p.cur
		key, n, ok := p.scalar(l, 0, false)
		if !ok || n >= len(l.text) || l.text[n] != ':' || n+1 < len(l.text) && l.text[n+1] != ' ' {
			return nil, false
		}
		rest := skipSpaces(l.text, n+1)
		var value *yaml.Node
		if rest == len(l.text) || l.text[rest] == '#' {
			p.advance()
			switch {
			case p.more && p.cur.indent > indent:
				value, ok = p.block(p.cur.indent)
			case p.more && p.cur.indent == indent && isItem(p.cur.text):
				value, ok = p.block(indent)
			default:
				value, ok = p.node(yaml.ScalarNode, "!!null", l.num, l.indent+n+2), true
			}
		} else {
			value, ok = p.inline(l, rest)
		}
		if !ok {
			return nil, false
		}
		p.kids = append(p.kids, key, value)
	}
	m.Content = p.content(from)
	return m, true
}

// sequence parses a block sequence at column indent.
func (p *simpleParser) sequence(indent int) (*yaml.Node, bool) {
	l := p.cur
	s := p.node(yaml.SequenceNode, "!!seq", l.num, indent+1)
	from := len(p.kids)
	for p.more && p.cur.indent == indent && isItem(p.cur.text) {
		l := p.cur
		start := skipSpaces(l.text, 1)
		var item *yaml.Node
		var ok bool
		switch {
		case start == len(l.text) || l.text[start] == '#':
			p.advance()
			if p.more && p.cur.indent > indent {
				item, ok = p.block(p.cur.indent)
			} else {
				item, ok = p.node(yaml.ScalarNode, "!!null", l.num, indent+2), true
			}
		default:
			// The item's content starts a node at its own column: a
			// mapping whose further keys are the lines at that column.
			inner := simpleLine{text: l.text[start:], offset: l.offset + start, num: l.num, indent: l.indent + start}
			if isItem(inner.text) {
				return nil, false // "- - x"
			}
			if _, n, isKey := p.scan(inner, 0, false); isKey && n < len(inner.text) && inner.text[n] == ':' && (n+1 == len(inner.text) || inner.text[n+1] == ' ') {
				p.cur = inner
				item, ok = p.block(inner.indent)
			} else {
				item, ok = p.inline(inner, 0)
			}
		}
		if !ok {
			return nil, false
		}
		p.kids = append(p.kids, item)
	}
	s.Content = p.content(from)
	return s, true
}

// inline parses the value that ends line l from its byte at, and moves
// to the next line, which may not continue the value.
func (p *simpleParser) inline(l simpleLine, at int) (*yaml.Node, bool) {
	var n *yaml.Node
	var end int
	var ok bool
	switch l.text[at] {
	case '[', '{':
		n, end, ok = p.flow(l, at)
	default:
		n, end, ok = p.scalar(l, at, false)
	}
	if !ok {
		return nil, false
	}
	if rest := skipSpaces(l.text, end); rest < len(l.text) && (l.text[rest] != '#' || rest == end) {
		return nil, false
	}
	p.advance()
	if p.more && p.cur.indent > l.indent {
		return nil, false // a value continued on the next line
	}
	return n, true
}

// flow parses a flow sequence or mapping written on one line, from its
// bracket at l.text[at]; end is the byte after its closing bracket.
func (p *simpleParser) flow(l simpleLine, at int) (n *yaml.Node, end int, ok bool) {
	if p.depth++; p.depth > maxSimpleDepth {
		return nil, 0, false
	}
	defer func() { p.depth-- }()
	open := l.text[at]
	n = p.node(yaml.SequenceNode, "!!seq", l.num, l.indent+at+1)
	n.Style = yaml.FlowStyle
	closing := byte(']')
	if open == '{' {
		n.Kind, n.Tag, closing = yaml.MappingNode, "!!map", '}'
	}
	i := skipSpaces(l.text, at+1)
	if i < len(l.text) && l.text[i] == closing {
		return n, i + 1, true
	}
	from := len(p.kids)
	for {
		if i >= len(l.text) {
			return nil, 0, false
		}
		if open == '{' {
			var key *yaml.Node
			key, i, ok = p.scalar(l, i, true)
			if !ok || i+1 >= len(l.text) || l.text[i] != ':' || l.text[i+1] != ' ' {
				return nil, 0, false
			}
			i = skipSpaces(l.text, i+1)
			p.kids = append(p.kids, key)
		}
		var item *yaml.Node
		switch {
		case i >= len(l.text):
			return nil, 0, false
		case l.text[i] == '[' || l.text[i] == '{':
			item, i, ok = p.flow(l, i)
		default:
			item, i, ok = p.scalar(l, i, true)
		}
		if !ok {
			return nil, 0, false
		}
		p.kids = append(p.kids, item)
		i = skipSpaces(l.text, i)
		switch {
		case i < len(l.text) && l.text[i] == closing:
			n.Content = p.content(from)
			return n, i + 1, true
		case i < len(l.text) && l.text[i] == ',':
			i = skipSpaces(l.text, i+1)
			if i < len(l.text) && (l.text[i] == ']' || l.text[i] == '}') {
				return nil, 0, false // a trailing comma
			}
		default:
			return nil, 0, false
		}
	}
}

// scalar parses a plain or quoted scalar from l.text[at]; end is the
// byte after it. A plain scalar ends at ": " or a ':' ending the line
// (a key), at " #", at the end of the line, and in a flow collection at
// ',', ']' or '}'; one holding ':' in a flow collection is not read
// here.
func (p *simpleParser) scalar(l simpleLine, at int, inFlow bool) (*yaml.Node, int, bool) {
	sc, end, ok := p.scan(l, at, inFlow)
	if !ok {
		return nil, 0, false
	}
	n := p.node(yaml.ScalarNode, sc.tag, l.num, l.indent+at+1)
	n.Style, n.Value = sc.style, sc.value
	return n, end, true
}

// scanned is a scalar scan read.
type scanned struct {
	style      yaml.Style
	tag, value string
}

// scan reads what scalar does, without making its node.
func (p *simpleParser) scan(l simpleLine, at int, inFlow bool) (n scanned, end int, ok bool) {
	text := l.text
	value := func(from, to int) string { return p.src[l.offset+from : l.offset+to] }
	switch c := text[at]; {
	case c == '"':
		close := bytes.IndexByte(text[at+1:], '"')
		if close < 0 || bytes.IndexByte(text[at+1:at+1+close], '\\') >= 0 {
			return n, 0, false // escapes, or a value on several lines
		}
		n.style, n.tag, n.value = yaml.DoubleQuotedStyle, "!!str", value(at+1, at+1+close)
		return n, at + close + 2, true
	case c == '\'':
		// "''" is a quote: the value is a substring unless it holds one.
		escaped := false
		i := at + 1
		for {
			close := bytes.IndexByte(text[i:], '\'')
			if close < 0 {
				return n, 0, false
			}
			i += close + 1
			if i < len(text) && text[i] == '\'' {
				escaped = true
				i++
				continue
			}
			break
		}
		n.style, n.tag, n.value = yaml.SingleQuotedStyle, "!!str", value(at+1, i-1)
		if escaped {
			n.value = strings.ReplaceAll(n.value, "''", "'")
		}
		return n, i, true
	case !plainStart(text, at, inFlow):
		return n, 0, false
	}
	end = at
	for end < len(text) {
		c := text[end]
		if c == ':' && (end+1 == len(text) || text[end+1] == ' ') || c == '#' && text[end-1] == ' ' {
			break
		}
		if inFlow && (c == ',' || c == ']' || c == '}' || c == '[' || c == '{' || c == ':') {
			if c == ':' || c == '[' || c == '{' {
				return n, 0, false
			}
			break
		}
		end++
	}
	for end > at && text[end-1] == ' ' {
		end--
	}
	n.value = value(at, end)
	if n.tag, ok = resolvePlain(n.value); !ok {
		return n, 0, false
	}
	return n, end, true
}

// plainStart reports whether text[at] may start a plain scalar here:
// not an indicator (a '-' only before a character that is not a blank,
// nor in a flow collection one of its indicators: YAML's "plain safe").
func plainStart(text []byte, at int, inFlow bool) bool {
	c := text[at]
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '-':
		if at+1 == len(text) || text[at+1] == ' ' {
			return false
		}
		return !inFlow || strings.IndexByte(",[]{}", text[at+1]) < 0
	}
	return strings.IndexByte("/._$^(+=~", c) >= 0
}

func skipSpaces(text []byte, i int) int {
	for i < len(text) && text[i] == ' ' {
		i++
	}
	return i
}

// The YAML library's resolution of a plain scalar's tag (its
// resolver.go): the words it knows, then by the first character,
// timestamps, integers and floats.
var (
	resolvedWords = map[string]string{
		"true": "!!bool", "True": "!!bool", "TRUE": "!!bool",
		"false": "!!bool", "False": "!!bool", "FALSE": "!!bool",
		"~": "!!null", "null": "!!null", "Null": "!!null", "NULL": "!!null",
		".nan": "!!float", ".NaN": "!!float", ".NAN": "!!float",
		".inf": "!!float", ".Inf": "!!float", ".INF": "!!float",
		"+.inf": "!!float", "+.Inf": "!!float", "+.INF": "!!float",
		"-.inf": "!!float", "-.Inf": "!!float", "-.INF": "!!float",
		"-0": "!!float", "-0.0": "!!float",
	}
	yamlStyleFloat = regexp.MustCompile(`^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$`)
)

// resolvePlain returns the tag the YAML library gives the plain scalar
// v; false when it may be a timestamp, which is left to the library.
func resolvePlain(v string) (string, bool) {
	if len(v) == 0 {
		return "", false
	}
	c := v[0]
	if tag, ok := resolvedWords[v]; ok {
		return tag, true
	}
	switch {
	case c == '.':
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return "!!float", true
		}
	case c == '+' || c == '-' || '0' <= c && c <= '9':
		digits := 0
		for digits < len(v) && '0' <= v[digits] && v[digits] <= '9' {
			digits++
		}
		if digits == 4 && len(v) > 4 && v[4] == '-' {
			return "", false // perhaps a timestamp
		}
		plain := strings.ReplaceAll(v, "_", "")
		if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return "!!int", true
		}
		if _, err := strconv.ParseUint(strings.TrimPrefix(plain, "+"), 0, 64); err == nil {
			return "!!int", true
		}
		if yamlStyleFloat.MatchString(plain) {
			if _, err := strconv.ParseFloat(plain, 64); err == nil {
				return "!!float", true
			}
		}
	}
	return "!!str", true
}
