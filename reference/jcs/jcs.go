// Package jcs canonicalises JSON per RFC 8785 (JSON Canonicalization Scheme)
// over strict I-JSON input (RFC 7493). The reference idempotency engine
// fingerprints payloads with it, so that key order, whitespace and the
// spelling of strings and numbers (1, 1.0, 1e0) do not change a fingerprint
// while a change of value or of JSON type ("100" versus 100) does.
//
// Canonicalize is plain RFC 8785 and exists to prove conformance with it.
// CanonicalizeExact (and CanonicalizeExactWithout) differs in one respect:
// a number whose magnitude exceeds 2^53-1 is written as its exact decimal
// value instead of being rounded to a double. Plain JCS writes both
// 9007199254740993 and 9007199254740992 as 9007199254740992, so a replay
// cache keyed on it would hand one request the other's stored response.
//
// Input is refused with an *Error when it is not I-JSON: invalid UTF-8,
// anything outside the RFC 8259 grammar, duplicate member names at any depth
// (compared after unescaping), lone surrogates, Unicode noncharacters, numbers
// that overflow an IEEE-754 double, or nesting deeper than MaxDepth.
//
// Why not github.com/gowebpki/jcs: its v1.0.2 parser does reject duplicate
// names and lone surrogates, but it parses every number straight into a
// float64, so 9007199254740993 becomes 9007199254740992 and there is no hook
// to change that; it has no way to drop members before serialising, and its
// errors are untyped strings without an offset. Guarding the trap would mean
// re-parsing the document ourselves anyway, so this package owns one small
// parser and serialiser instead, checked against the RFC 8785 vectors
// (BenchmarkCanonicalizeExact1KB measures it: docs/performance.md,
// Canonical JSON).
package jcs

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects accepted. It bounds
// the parser's stack and the recursion of the final copy, so hostile input
// is refused with an error instead of exhausting memory or the stack.
const MaxDepth = 1000

// Error reports why an input is not canonicalisable I-JSON. Every such
// failure is the client's fault, so callers can map any *Error to
// 400 payload_not_canonicalizable and use Reason as the detail.
type Error struct {
	Offset int    // byte offset in the input where the problem was found
	Reason string // fixed description; never echoes input bytes
}

func (e *Error) Error() string {
	return "jcs: " + e.Reason + " at byte offset " + strconv.Itoa(e.Offset)
}

// Canonicalize returns the RFC 8785 canonical form of the I-JSON text src.
// Numbers are rounded to IEEE-754 doubles and written the way ECMAScript's
// Number.prototype.toString does, exactly as the RFC requires.
func Canonicalize(src []byte) ([]byte, error) {
	return canonicalize(nil, src, false, nil)
}

// CanonicalizeExact is Canonicalize except that it never rounds a number
// onto a neighbour that means something else:
//
//   - an integer is written as its exact decimal digits (no exponent or
//     fraction, no leading zeros, "-" when negative). Up to 2^53-1 that is
//     the text RFC 8785 produces; beyond it, 9007199254740992 and
//     9007199254740993 stay distinct, while spellings of one value
//     (9007199254740993.0, 9.007199254740993e15) still agree;
//   - a non-integer whose magnitude exceeds 2^53-1 is written exactly too,
//     as digits, '.', and fraction digits without trailing zeros. Every
//     double that large is an integer, so RFC formatting would give
//     9007199254740993.5 the fingerprint of 9007199254740994, and would
//     make the output non-canonical (1000000000000000000000.1 would become
//     1e+21, which reads back as an integer);
//   - any other number is formatted as RFC 8785 says, rounding included:
//     like RFC 8785, 1.00000000000000001 and 1 share a canonical form.
//
// Output size stays bounded. Numbers must still lie within double range, so
// an integer part has at most 309 digits and 1e999999 is refused before any
// digit is written; and a document whose integers would add more than 1 MiB
// of zeros in all (some 3400 copies of 1e308) is refused, so the output is
// never more than 1 MiB larger than the input. Both refusals are *Errors.
// A non-integer's exact form is never longer than its literal.
func CanonicalizeExact(src []byte) ([]byte, error) {
	return canonicalize(nil, src, true, nil)
}

// CanonicalizeExactWithout is CanonicalizeExact after dropping the values at
// the given RFC 6901 JSON Pointers (object members are removed with their
// names, array elements without leaving a hole). A pointer that does not
// resolve is ignored. All pointers are resolved against the original
// document, so removing an array element does not shift the index another
// pointer refers to, and the order of exclude does not matter.
//
// The input is still validated in full, excluded parts included. A
// malformed pointer, or "" (the whole document), is a caller bug rather
// than a bad payload, so it is reported as a plain error, not an *Error,
// before src is looked at.
func CanonicalizeExactWithout(src []byte, exclude []string) ([]byte, error) {
	return canonicalize(nil, src, true, exclude)
}

// AppendExactWithout appends CanonicalizeExactWithout(src, exclude) to dst
// and returns the extended slice; on error dst is returned unchanged. With
// a dst of enough capacity it allocates nothing, which is what a caller
// hashing canonical text wants.
func AppendExactWithout(dst, src []byte, exclude []string) ([]byte, error) {
	return canonicalize(dst, src, true, exclude)
}

// The canonicaliser makes one pass over src, in a loop with an explicit
// stack, validating it and writing its canonical text to out. What is
// canonical already, which is most of a compact body, is not copied token
// by token: s[run:i] is the text since the last change, appended to out in
// one go when something must be dropped or rewritten.
//
// Objects are where the text changes most: members must be sorted. An
// object holding no other object is sorted in place as soon as it ends;
// the common kind, compact with plain names and simple values, is read by
// flatObject in a tighter loop.
// An object holding others is left as sent, with the place of each
// member's text noted, and emit writes its members in order while copying
// out to the caller. Either way every byte is moved a bounded number of
// times however deep the document is; sorting each object as it ends
// would re-copy a subtree once per enclosing level.
type canonicaliser struct {
	src     []byte
	exact   bool
	padding int  // zeros exact mode has added, see maxPadding
	spaced  bool // src has whitespace between tokens: flatObject gave up

	out     []byte // canonical text, bar the order of members in objects
	names   []byte // unescaped member names that were written with escapes
	scratch []byte // an object's text while it is sorted in place
	order   []sortKey
	// shape is the members of the last object sorted, in the order sent,
	// and shapeOrder their sorted order: the objects of an array mostly
	// share their names and the order they come in.
	shape      []member
	shapeOrder []sortKey
	stack      []frame // the arrays and objects being parsed, innermost last
	open       []member
	// sorted holds the members of each object emit sorts, in order.
	sorted []member
	// objects are the objects emit sorts and those holding one, in the
	// order they start in out.
	objects []object

	// exclude's pointers whose path so far matches that of the value
	// being parsed are live[liveLo:].
	exclude []string
	live    []cursor
	liveLo  int
}

// frame is an array or object being parsed.
type frame struct {
	lo      int  // where it starts in out
	end     byte // '}' or ']'
	nested  bool // it holds an object, at any depth
	inOrder bool // an object's names so far are strictly increasing
	// len(out)-run and len(out) when an object started: while they stay,
	// its text is still only in src.
	shift, flushed int
	base           int // an object's first member in open
	self           int // an object's index in objects
	index          int // an array's current element
	// While excluding: where the current member or element starts in out
	// (at its comma) and in objects, and the state to restore after it.
	cut, objects int
	saved        int
	drop         bool
}

// member is an object member, written to out[lo:hi] as "name":value.
type member struct {
	// key is the first eight bytes of the name, big-endian and padded
	// with zeros, when they are ASCII, else 0: most names differ there.
	key            uint64
	nameLo, nameHi int  // its unescaped name: in src or, if escaped, names
	escaped        bool //
	dropped        bool // removed by an exclusion pointer
	off            int  // source offset of the name, for errors
	lo             int
	// Where it ends (at its comma or the '}'), noted when that is read,
	// and for emit the index in objects of the first object inside its
	// value.
	hi, objects int
}

// object is an object written to out[lo:hi] that, or some object inside
// which, emit must sort.
type object struct {
	lo, hi int
	// sorted[members:members+n] are its members in canonical order;
	// members is -1 when they are in order and only an inner object is
	// not.
	members, n int
	inner      int // how many of the objects after this one lie inside it
}

// cursor is an exclusion pointer matched up to its byte at, where its
// next reference token starts.
type cursor struct{ ptr, at int }

// canonicalisers recycles the scratch slices: with them a call allocates
// nothing beyond its result.
var canonicalisers = sync.Pool{New: func() any { return new(canonicaliser) }}

func canonicalize(dst, src []byte, exact bool, exclude []string) ([]byte, error) {
	for _, ptr := range exclude {
		if err := checkPointer(ptr); err != nil {
			return dst, err
		}
	}
	c := canonicalisers.Get().(*canonicaliser)
	defer c.release()
	c.src, c.exact, c.exclude = src, exact, exclude
	for i := range exclude {
		c.live = append(c.live, cursor{ptr: i, at: 1}) // after the leading '/'
	}
	if err := c.parse(); err != nil {
		return dst, err
	}
	return c.emit(slices.Grow(dst, len(c.out)), 0, len(c.out), 0), nil
}

func (c *canonicaliser) release() {
	// A huge document must not pin its scratch memory for the process's
	// lifetime; let the GC have it instead.
	if cap(c.out)+cap(c.names)+cap(c.scratch) > 1<<20 || cap(c.open)+cap(c.sorted)+cap(c.objects)+cap(c.stack) > 1<<14 {
		return
	}
	*c = canonicaliser{
		out:        c.out[:0],
		names:      c.names[:0],
		scratch:    c.scratch[:0],
		order:      c.order[:0],
		shape:      c.shape[:0],
		shapeOrder: c.shapeOrder[:0],
		stack:      c.stack[:0],
		open:       c.open[:0],
		sorted:     c.sorted[:0],
		objects:    c.objects[:0],
		live:       c.live[:0],
	}
	canonicalisers.Put(c)
}

// failAt reports reason at off, or end of input when off is past the
// last byte, which is the more useful description.
func failAt(src []byte, off int, reason string) *Error {
	if off >= len(src) {
		return &Error{Offset: len(src), Reason: "unexpected end of input"}
	}
	return &Error{Offset: off, Reason: reason}
}

// space marks JSON's four whitespace bytes.
var space = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

func skipSpace(s []byte, i int) int {
	for i < len(s) && space[s[i]] {
		i++
	}
	return i
}

// dropSpace skips the whitespace at s[i:], after moving the canonical text
// s[run:i] to out, and returns out, i and run as parse keeps them. Callers
// test s[i] <= ' ' first: whitespace is rare in most bodies.
func dropSpace(out, s []byte, i, run int) ([]byte, int, int) {
	out = append(out, s[run:i]...)
	i = skipSpace(s, i)
	return out, i, i
}

// parse writes the canonical text of src to out, bar the members of the
// objects emit sorts.
func (c *canonicaliser) parse() *Error {
	s, out := c.src, c.out
	// s[run:i] is canonical and not yet in out, so s[i] goes to
	// len(out)+i-run.
	i, run := 0, 0
	var f *frame // the innermost container, nil outside any
	var err *Error
	name := false // a member name comes next
	excluding := len(c.exclude) > 0
	for {
		if i < len(s) && s[i] <= ' ' {
			out, i, run = dropSpace(out, s, i, run)
		}
		if name {
			// A member name and its colon, then its value.
			name = false
			if i == len(s) || s[i] != '"' {
				if i < len(s) && s[i] == '}' { // after a comma
					return failAt(s, i, "trailing comma in object")
				}
				return failAt(s, i, "expected string for object member name")
			}
			c.open = append(c.open, member{})
			m := &c.open[len(c.open)-1]
			m.off, m.lo, m.nameLo = i, len(out)+i-run, i+1
			if j, key := plainName(s, i+1); j < len(s) && s[j] == '"' {
				i, m.nameHi, m.key = j+1, j, key // already canonical
			} else {
				names := len(c.names)
				if out, i, run, err = c.string(out, i, j, run, true); err != nil {
					return err
				}
				if m.nameHi = i - 1; len(c.names) > names {
					m.escaped, m.nameLo, m.nameHi = true, names, len(c.names)
					m.key = nameKey(c.names, names, len(c.names))
				} else {
					m.key = nameKey(s, m.nameLo, m.nameHi)
				}
			}
			if i < len(s) && s[i] <= ' ' {
				out, i, run = dropSpace(out, s, i, run)
			}
			if i == len(s) || s[i] != ':' {
				return failAt(s, i, "expected ':' after object member name")
			}
			i++
			// Names in strictly increasing order need no sorting and
			// cannot repeat; otherwise sorting finds any duplicate.
			if f.inOrder && len(c.open) > f.base+1 {
				p := &c.open[len(c.open)-2]
				if p.key == 0 || p.key >= m.key {
					// Differing keys decide, as in compare, without
					// a call: this runs for every member.
					f.inOrder = (p.key <= m.key || m.key == 0) && c.compare(p, m) < 0
				}
			}
			if excluding {
				f.saved, f.drop = c.descend(c.memberName(m), -1)
			}
			continue // to the value
		}
		// A value starts at i.
		if i == len(s) {
			return failAt(s, i, "")
		}
		switch ch := s[i]; {
		case ch == '"':
			if j := skipPlain(s, i+1); j < len(s) && s[j] == '"' {
				i = j + 1 // already canonical
			} else if out, i, run, err = c.string(out, i, j, run, false); err != nil {
				return err
			}
		case ch == '{' || ch == '[':
			if len(c.stack) == MaxDepth {
				return failAt(s, i, "nesting deeper than 1000 levels")
			}
			// No exclusion pointer may lead inside a flat object.
			if ch == '{' && !c.spaced && len(c.live) == c.liveLo {
				var ok bool
				if out, i, run, ok = c.flatObjects(out, i, run, f); ok {
					break
				}
			}
			lo, shift, end := len(out)+i-run, len(out)-run, ch+2 // '}' or ']'
			i++
			if i < len(s) && s[i] <= ' ' {
				out, i, run = dropSpace(out, s, i, run)
			}
			if i < len(s) && s[i] == end {
				i++
				if ch == '{' && f != nil {
					f.nested = true
				}
				break // empty: nothing to sort or exclude
			}
			// Fields are set one by one, not through a composite
			// literal: copying a struct just built stalls the CPU.
			c.stack = append(c.stack, frame{})
			f = &c.stack[len(c.stack)-1]
			f.lo, f.end, f.inOrder = lo, end, true
			if ch == '{' {
				f.shift, f.flushed = shift, len(out)
				f.base, f.self = len(c.open), len(c.objects)
				c.objects = append(c.objects, object{})
				o := &c.objects[len(c.objects)-1]
				o.lo, o.members = lo, -1
				name = true
			}
			if excluding {
				f.cut, f.objects = lo+1, len(c.objects)
				if ch == '[' {
					f.saved, f.drop = c.descend(nil, 0)
				}
			}
			continue
		case ch == '-' || '0' <= ch && ch <= '9':
			if j := shortNumber(s, i); j >= 0 {
				i = j // already canonical
				break
			}
			var n number
			if err = scanNumber(s, i, &n); err != nil {
				return err
			}
			if !n.verbatim(s, c.exact) {
				if out, err = appendNumber(append(out, s[run:i]...), s, &n, c.exact, &c.padding); err != nil {
					return err
				}
				run = n.end
			}
			i = n.end
		case ch == 't':
			if i, err = literal(s, i, "true"); err != nil {
				return err
			}
		case ch == 'f':
			if i, err = literal(s, i, "false"); err != nil {
				return err
			}
		case ch == 'n':
			if i, err = literal(s, i, "null"); err != nil {
				return err
			}
		case ch == ']' && f != nil && f.end == ']': // after a comma
			return failAt(s, i, "trailing comma in array")
		default:
			return failAt(s, i, "unexpected character")
		}
		// A value ended at i: go on to the next member or element, or
		// end the containers it ends.
		for {
			if f == nil {
				c.out = append(out, s[run:i]...)
				if i = skipSpace(s, i); i < len(s) {
					return failAt(s, i, "unexpected content after the JSON value")
				}
				return nil
			}
			if excluding {
				c.ascend(f.saved)
				if f.drop {
					out, run = append(out, s[run:i]...)[:f.cut], i
					c.objects = c.objects[:f.objects]
					if f.end == '}' {
						c.open[len(c.open)-1].dropped = true
					}
				}
			}
			if i < len(s) && s[i] <= ' ' {
				out, i, run = dropSpace(out, s, i, run)
			}
			if i < len(s) && s[i] == ',' {
				// Another member or element follows.
				if excluding {
					f.cut, f.objects = len(out)+i-run, len(c.objects)
					if f.cut == f.lo+1 { // all before it were excluded
						out, run = append(out, s[run:i]...), i+1
					}
				}
				if f.end == '}' {
					c.open[len(c.open)-1].hi = len(out) + i - run
					name = true
				} else if f.index++; excluding {
					f.saved, f.drop = c.descend(nil, f.index)
				}
				i++
				break
			}
			if i == len(s) || s[i] != f.end {
				if f.end == '}' {
					return failAt(s, i, "expected ',' or '}' after object member")
				}
				return failAt(s, i, "expected ',' or ']' after array element")
			}
			i++
			if out, run, err = c.end(out, i, run); err != nil {
				return err
			}
			if f = nil; len(c.stack) > 0 {
				f = &c.stack[len(c.stack)-1]
			}
		}
	}
}

func literal(s []byte, i int, word string) (int, *Error) {
	end := i + len(word)
	if end > len(s) || string(s[i:end]) != word {
		return i, failAt(s, i, "invalid literal")
	}
	return end, nil
}

// end closes the innermost container, which ends before i in src, and
// returns out and run as parse keeps them. An object whose members are
// not in order is sorted in place, or noted for emit when it holds
// objects.
func (c *canonicaliser) end(out []byte, i, run int) ([]byte, int, *Error) {
	f := &c.stack[len(c.stack)-1]
	c.stack = c.stack[:len(c.stack)-1]
	object := f.end == '}'
	if len(c.stack) > 0 && (object || f.nested) {
		c.stack[len(c.stack)-1].nested = true
	}
	if !object {
		return out, run, nil
	}
	ms := c.open[f.base:]
	c.open = c.open[:f.base] // ms stays valid until the next member
	if f.inOrder {
		if len(c.objects) == f.self+1 {
			c.objects = c.objects[:f.self] // nothing to sort in it
		} else {
			o := &c.objects[f.self]
			o.hi, o.inner = len(out)+i-run, len(c.objects)-f.self-1
		}
		return out, run, nil
	}
	ms[len(ms)-1].hi = len(out) + i - run - 1
	order, off := c.sortMembers(ms, len(c.stack) > 0 && c.stack[len(c.stack)-1].end == ']')
	if off >= 0 {
		return out, run, &Error{Offset: off, Reason: "duplicate object member name"}
	}
	if f.nested {
		o := &c.objects[f.self]
		o.hi, o.inner = len(out)+i-run, len(c.objects)-f.self-1
		o.members, o.n = len(c.sorted), len(ms)
		// The objects inside lie in order after this one, as members do.
		next := f.self + 1
		for k := range ms {
			for next < len(c.objects) && c.objects[next].lo < ms[k].lo {
				next++
			}
			ms[k].objects = next
		}
		for _, k := range order {
			c.sorted = append(c.sorted, ms[k.index])
		}
		return out, run, nil
	}
	// No object inside: sort it in place. The members' text is still in
	// src when nothing in the object was rewritten, else it is copied
	// aside first.
	c.objects = c.objects[:f.self]
	n := len(out) + i - run - f.lo
	text, shift := c.src, f.shift
	if len(out)-run != shift || len(out) != f.flushed {
		out, run = append(out, c.src[run:i]...), i
		// 16 bytes more, for appendSorted's 16-byte copies.
		c.scratch = append(append(c.scratch[:0], out[f.lo:]...), make([]byte, 16)...)
		text, shift = c.scratch, f.lo
		out = out[:f.lo]
	} else {
		out, run = append(out, c.src[run:f.lo-shift]...), i
	}
	return appendSorted(out, ms, order, text, shift, n), run, nil
}

// appendSorted appends an object of canonical length n whose members ms
// lie at text[m.lo-shift:m.hi-shift], writing them in order.
func appendSorted(out []byte, ms []member, order []sortKey, text []byte, shift, n int) []byte {
	lo := len(out)
	out = slices.Grow(out, n+16)
	buf := out[:lo+n+16]
	w := lo + 1
	// Members are short: they are copied 16 bytes at a time, which may
	// read and write up to 15 bytes past their ends, when text has that
	// room (out has). No member ends after the last one.
	wide := ms[len(ms)-1].hi-shift+16 <= len(text)
	for _, k := range order {
		m := &ms[k.index]
		if m.dropped {
			continue
		}
		buf[w-1] = ','
		from, size := m.lo-shift, m.hi-m.lo
		if wide && size <= 16 {
			*(*[16]byte)(buf[w:]) = *(*[16]byte)(text[from:])
		} else {
			copy(buf[w:], text[from:from+size])
		}
		w += size + 1
	}
	buf[lo] = '{'
	if w == lo+1 { // no member
		w++
	}
	buf[w-1] = '}'
	return buf[:w]
}

// memberName returns the unescaped name of m.
func (c *canonicaliser) memberName(m *member) []byte {
	if m.escaped {
		return c.names[m.nameLo:m.nameHi]
	}
	return c.src[m.nameLo:m.nameHi]
}

// nameKey returns the key of the name text[lo:hi]: a short name's key is
// read as eight bytes of text, the bytes after the name masked off.
func nameKey(text []byte, lo, hi int) uint64 {
	var key uint64
	switch n := hi - lo; {
	case n >= 8:
		key = binary.BigEndian.Uint64(text[lo:])
	case lo+8 <= len(text):
		key = binary.BigEndian.Uint64(text[lo:]) & keyMasks[n]
	default:
		for k, b := range text[lo:hi] {
			key |= uint64(b) << (56 - 8*k)
		}
	}
	if key&0x8080808080808080 != 0 {
		return 0 // compareUTF16 orders some non-ASCII bytes otherwise
	}
	return key
}

// keyMasks[n] keeps the first n bytes of a big-endian key.
var keyMasks = [8]uint64{0, 0xFF << 56, 0xFFFF << 48, 0xFFFFFF << 40, 0xFFFFFFFF << 32, 0xFFFFFFFFFF << 24, 0xFFFFFFFFFFFF << 16, 0xFFFFFFFFFFFFFF << 8}

// compare orders members by name as RFC 8785 does.
func (c *canonicaliser) compare(a, b *member) int {
	// Keys hold a prefix of the names, so differing keys order them;
	// equal ones, or a missing one, leave it to the whole names.
	if a.key != b.key && a.key != 0 && b.key != 0 {
		if a.key < b.key {
			return -1
		}
		return 1
	}
	return compareUTF16(c.memberName(a), c.memberName(b))
}

// sortKey is a member being sorted, ms[index]: sorting these small values
// moves less than sorting the members would.
type sortKey struct {
	key   uint64
	index int
}

// sortMembers returns the order of ms, an object's members, by name, and
// the offset of a duplicate name, or -1. Sorting brings equal names
// together, so finding them needs no map.
func (c *canonicaliser) sortMembers(ms []member, inArray bool) ([]sortKey, int) {
	if c.sameShape(ms) {
		return c.shapeOrder, -1 // and no duplicate, as then
	}
	return c.sortShape(ms, inArray)
}

// sortShape is sortMembers for ms that do not have the names of c.shape.
// Unless they have a duplicate, they become the shape when they are the
// members of an array's element: other objects seldom share names.
func (c *canonicaliser) sortShape(ms []member, inArray bool) ([]sortKey, int) {
	order := slices.Grow(c.order[:0], len(ms))[:len(ms)]
	for k := range ms {
		order[k] = sortKey{key: ms[k].key, index: k}
	}
	order, off := c.sortKeys(ms, order)
	if off < 0 && inArray {
		c.shape = append(c.shape[:0], ms...)
		c.order, c.shapeOrder = c.shapeOrder, order
	} else {
		c.order = order
	}
	return order, off
}

// sameShape reports whether ms have the names of c.shape, in its order.
// Equal keys of names of equal length up to eight bytes are equal names,
// unless the key is 0.
func (c *canonicaliser) sameShape(ms []member) bool {
	if len(ms) != len(c.shape) {
		return false
	}
	for k := range ms {
		a, b := &ms[k], &c.shape[k]
		n := a.nameHi - a.nameLo
		if a.key != b.key || n != b.nameHi-b.nameLo {
			return false
		}
		if (n > 8 || a.key == 0) && !bytes.Equal(c.memberName(a), c.memberName(b)) {
			return false
		}
	}
	return true
}

// sortKeys sorts order, ms's members, by name and returns it with the
// offset of a duplicate name, or -1.
func (c *canonicaliser) sortKeys(ms []member, order []sortKey) ([]sortKey, int) {
	cmp := func(a, b *sortKey) int {
		if a.key != b.key && a.key != 0 && b.key != 0 {
			if a.key < b.key {
				return -1
			}
			return 1
		}
		return compareUTF16(c.memberName(&ms[a.index]), c.memberName(&ms[b.index]))
	}
	dup := func(a, b *sortKey) int { return max(ms[a.index].off, ms[b.index].off) }
	if len(order) > 12 {
		slices.SortFunc(order, func(a, b sortKey) int { return cmp(&a, &b) })
		for k := 1; k < len(order); k++ {
			if cmp(&order[k-1], &order[k]) == 0 {
				return order, dup(&order[k-1], &order[k])
			}
		}
		return order, -1
	}
	// Most objects are small: insertion sort, which meets any name equal
	// to the one being inserted as the first that is not greater.
	for k := 1; k < len(order); k++ {
		x := order[k]
		j := k
		for ; j > 0; j-- {
			d := cmp(&order[j-1], &x)
			if d == 0 {
				return order, dup(&order[j-1], &x)
			}
			if d < 0 {
				break
			}
			order[j] = order[j-1]
		}
		order[j] = x
	}
	return order, -1
}

// compareUTF16 orders two valid UTF-8 strings by their UTF-16 code units, as
// RFC 8785 sorts member names, without transcoding. UTF-8 byte order is code
// point order, which matches UTF-16 order except that U+E000..U+FFFF (lead
// byte 0xEE or 0xEF) sorts after the supplementary planes (lead byte 0xF0 or
// more), which UTF-16 writes as surrogates 0xD800..0xDFFF. The first
// differing byte is a lead byte in both strings or a continuation byte in
// both, because the common prefix ends on the same character boundary.
func compareUTF16(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x >= 0xF0 && (y == 0xEE || y == 0xEF) {
			return -1
		}
		if y >= 0xF0 && (x == 0xEE || x == 0xEF) {
			return 1
		}
		return int(x) - int(y)
	}
	return len(a) - len(b)
}

// descend makes the live pointers those of the current container's that
// lead to its child: the member named name or, when name is nil, the
// element at index. It reports whether one of them ends there, excluding
// the child, and returns what ascend needs to restore them.
func (c *canonicaliser) descend(name []byte, index int) (saved int, drop bool) {
	saved, end := c.liveLo, len(c.live)
	c.liveLo = end
	for _, cur := range c.live[saved:end] {
		tok := c.exclude[cur.ptr][cur.at:]
		next := strings.IndexByte(tok, '/')
		if next >= 0 {
			tok = tok[:next]
		}
		var hit bool
		if name != nil {
			hit = tokenIs(tok, name)
		} else {
			i, ok := arrayIndex(tok)
			hit = ok && i == index
		}
		switch {
		case !hit:
		case next < 0:
			drop = true
		default:
			c.live = append(c.live, cursor{ptr: cur.ptr, at: cur.at + next + 1})
		}
	}
	if drop {
		c.live = c.live[:end] // what lies inside an excluded value is moot
	}
	return saved, drop
}

func (c *canonicaliser) ascend(saved int) {
	c.live, c.liveLo = c.live[:c.liveLo], saved
}

// string reads the string literal at s[start], whose first byte that is
// not plain is at i, and returns out, the end of the literal and run as
// parse keeps them. A literal with escapes is rewritten the canonical way,
// and for a name its unescaped text appended to names.
func (c *canonicaliser) string(out []byte, start, i, run int, isName bool) ([]byte, int, int, *Error) {
	s := c.src
	i, reason := skipRaw(s, i)
	switch {
	case reason != "":
		return out, i, run, failAt(s, i, reason)
	case i == len(s):
		return out, i, run, failAt(s, i, "")
	case s[i] == '"':
		return out, i + 1, run, nil // canonical as it is
	case s[i] == '\\':
		out, i, err := c.escapedString(append(out, s[run:i]...), start, i, isName)
		return out, i, i, err
	default:
		return out, i, run, failAt(s, i, "control character in string must be escaped")
	}
}

// skipRaw returns the index of the first byte of s at or after i that is
// '"', '\\' or a control character, or len(s), having checked the
// multi-byte characters before it; or the offset of one that is not
// I-JSON, and why.
func skipRaw(s []byte, i int) (int, string) {
	for i = skipPlain(s, i); i < len(s) && s[i] >= utf8.RuneSelf; i = skipPlain(s, i) {
		size, reason := checkUTF8(s[i:])
		if reason != "" {
			return i, reason
		}
		i += size
	}
	return i, ""
}

// escapedString finishes a string whose first escape is at i and whose
// text before is in out: it writes the canonical escapes and, for a name,
// the unescaped text to names.
func (c *canonicaliser) escapedString(out []byte, start, i int, isName bool) ([]byte, int, *Error) {
	s := c.src
	if isName {
		c.names = append(c.names, s[start+1:i]...)
	}
	for {
		j := skipPlain(s, i)
		out = append(out, s[i:j]...)
		if isName {
			c.names = append(c.names, s[i:j]...)
		}
		if i = j; i == len(s) {
			return out, i, failAt(s, i, "")
		}
		size := 1
		switch ch := s[i]; {
		case ch == '"':
			return append(out, '"'), i + 1, nil
		case ch == '\\':
			r, size, reason := unescape(s[i:])
			if reason != "" {
				return out, i, failAt(s, i, reason)
			}
			if r < utf8.RuneSelf {
				out = appendEscaped(out, byte(r))
			} else {
				out = utf8.AppendRune(out, r)
			}
			if isName {
				c.names = utf8.AppendRune(c.names, r)
			}
			i += size
			continue
		case ch < 0x20:
			return out, i, failAt(s, i, "control character in string must be escaped")
		default:
			var reason string
			if size, reason = checkUTF8(s[i:]); reason != "" {
				return out, i, failAt(s, i, reason)
			}
		}
		out = append(out, s[i:i+size]...)
		if isName {
			c.names = append(c.names, s[i:i+size]...)
		}
		i += size
	}
}

// plain marks the bytes a string may hold as they are: printable ASCII
// other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipPlain returns the index of the first byte of s at or after i that
// is not plain, or len(s). It tests eight bytes at a time: most of a body
// is the text of its strings.
func skipPlain(s []byte, i int) int {
	for ; i+8 <= len(s); i += 8 {
		if m := notPlain(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return skipPlainTail(s, i)
}

// peek returns the eight bytes at s[i:], read little-endian, and
// notPlain of them, or zeros when fewer remain. Inlined, it finds the end
// of most strings without a call.
func peek(s []byte, i int) (v, stop uint64) {
	if i+8 <= len(s) {
		v = binary.LittleEndian.Uint64(s[i:])
		stop = notPlain(v)
	}
	return v, stop
}

// notPlain sets the high bit of each byte of v, eight bytes of text read
// little-endian, that is >= 0x80, < 0x20, '"' or '\\'. The subtractions
// borrow only from a byte that is flagged rightly, so the lowest flag is
// exact even where higher ones are not.
func notPlain(v uint64) uint64 {
	q, b := v^(ones*'"'), v^(ones*'\\') // zero where they are
	return (v | (v-ones*0x20)&^v | (q-ones)&^q | (b-ones)&^b) & highs
}

// plainName is skipPlain for a member name starting at s[lo], which also
// returns the key of s[lo:end] (see member.key) from the eight bytes it
// reads first: most names are shorter, so this one read finds both.
func plainName(s []byte, lo int) (end int, key uint64) {
	v, stop := peek(s, lo)
	switch {
	case stop != 0:
		end = lo + bits.TrailingZeros64(stop)/8
	case lo+8 <= len(s):
		end = skipPlain(s, lo+8)
	default:
		end = skipPlainTail(s, lo)
		return end, nameKey(s, lo, end)
	}
	return end, wordKey(v, stop)
}

// wordKey is the key of a plain name whose first eight bytes, read
// little-endian, are v, and which ends at the first byte peek flags in
// stop, if any. It does not wait for the name's length.
func wordKey(v, stop uint64) uint64 {
	below := (stop&-stop)>>7 - 1 // the bytes before the first flagged
	return bits.ReverseBytes64(v & below)
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// skipPlainTail is skipPlain a byte at a time, for the last seven.
func skipPlainTail(s []byte, i int) int {
	for i < len(s) && plain[s[i]] {
		i++
	}
	return i
}

// checkUTF8 validates the multi-byte character at the start of s. Go's
// decoder already rejects overlong forms and UTF-8-encoded surrogates.
func checkUTF8(s []byte) (size int, reason string) {
	r, size := utf8.DecodeRune(s)
	if r == utf8.RuneError && size == 1 {
		return 0, "invalid UTF-8 in string"
	}
	if isNoncharacter(r) {
		return 0, "Unicode noncharacter in string (not I-JSON)"
	}
	return size, ""
}

// isNoncharacter reports the 66 code points RFC 7493 section 2.1 bars from
// I-JSON strings: U+FDD0..U+FDEF and the last two of every plane.
func isNoncharacter(r rune) bool {
	return r >= 0xFDD0 && (r <= 0xFDEF || r&0xFFFE == 0xFFFE)
}

// unescape decodes the escape sequence at the start of s (s[0] == '\\'),
// joining a surrogate pair written as two \u escapes.
func unescape(s []byte) (r rune, size int, reason string) {
	if len(s) < 2 {
		return 0, 0, "unexpected end of input"
	}
	switch s[1] {
	case '"', '\\', '/':
		return rune(s[1]), 2, ""
	case 'b':
		return '\b', 2, ""
	case 'f':
		return '\f', 2, ""
	case 'n':
		return '\n', 2, ""
	case 'r':
		return '\r', 2, ""
	case 't':
		return '\t', 2, ""
	case 'u':
	default:
		return 0, 0, "invalid escape sequence"
	}
	r = hex4(s[2:])
	switch {
	case r < 0:
		return 0, 0, "invalid \\u escape"
	case 0xDC00 <= r && r <= 0xDFFF:
		return 0, 0, "lone low surrogate in \\u escape"
	case 0xD800 <= r && r <= 0xDBFF:
		var lo rune = -1
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			lo = hex4(s[8:])
		}
		if lo < 0xDC00 || lo > 0xDFFF {
			return 0, 0, "lone high surrogate in \\u escape"
		}
		r, size = 0x10000+(r-0xD800)<<10+(lo-0xDC00), 12
	default:
		size = 6
	}
	if isNoncharacter(r) {
		return 0, 0, "Unicode noncharacter in string (not I-JSON)"
	}
	return r, size, ""
}

// hex4 decodes four hex digits, or returns -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// emit appends out[lo:hi] to dst, writing the members of every object
// to reorder in it sorted; objects[i] is the first object at or after lo.
func (c *canonicaliser) emit(dst []byte, lo, hi, i int) []byte {
	for i < len(c.objects) && c.objects[i].lo < hi {
		o := &c.objects[i]
		if o.members < 0 {
			i++ // in order itself; one inside it is not
			continue
		}
		dst = append(dst, c.out[lo:o.lo]...)
		dst = append(dst, '{')
		sep := false
		for k := o.members; k < o.members+o.n; k++ {
			m := &c.sorted[k]
			if m.dropped {
				continue
			}
			if sep {
				dst = append(dst, ',')
			}
			sep = true
			dst = c.emit(dst, m.lo, m.hi, m.objects)
		}
		dst = append(dst, '}')
		lo, i = o.hi, i+1+o.inner
	}
	return append(dst, c.out[lo:hi]...)
}

// AppendString appends s as an RFC 8785 string (section 3.2.2.2): only
// '"', '\\' and controls are escaped, using the two-character forms where
// JSON has them and \u00xx (lowercase hex) otherwise. Everything else,
// U+007F and U+2028 included, is written as raw UTF-8. s must be valid
// UTF-8; callers building canonical JSON from other sources (headers, a
// query) check that first.
func AppendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	from := 0 // s[from:i] needs no escape
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			dst = appendEscaped(append(dst, s[from:i]...), c)
			from = i + 1
		}
	}
	dst = append(dst, s[from:]...)
	return append(dst, '"')
}

// appendEscaped appends the byte c of a string as RFC 8785 writes it.
func appendEscaped(dst []byte, c byte) []byte {
	switch {
	case c == '"' || c == '\\':
		return append(dst, '\\', c)
	case c >= 0x20:
		return append(dst, c)
	case c == '\b':
		return append(dst, '\\', 'b')
	case c == '\t':
		return append(dst, '\\', 't')
	case c == '\n':
		return append(dst, '\\', 'n')
	case c == '\f':
		return append(dst, '\\', 'f')
	case c == '\r':
		return append(dst, '\\', 'r')
	default:
		const hex = "0123456789abcdef"
		return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
	}
}
