package jcs

import (
	"bytes"
	"math/bits"
	"slices"
)

// maxFlat is the most members flatObject takes: wider objects are rarer,
// and parse takes them.
const maxFlat = 16

// flatObject canonicalises the object at s[lo] when it is of the kind most
// bodies are made of: written without whitespace, with at most maxFlat
// members, plain ASCII names, and values that are strings without
// escapes, numbers written the canonical way, true, false or null. It
// returns out, the end of the object and run as parse keeps them, and
// whether it took the object: it leaves any other object, and every
// error, to parse, having changed nothing. It costs a fraction of what
// parse does for the same members: no frame, no call for most tokens, and
// only the place and key of each member noted.
func (c *canonicaliser) flatObject(out []byte, lo, run int, inArray bool) ([]byte, int, int, bool) {
	s := c.src
	base := len(c.open)
	c.open = slices.Grow(c.open, maxFlat)
	// Scratch beyond the open members; their lo and hi are places in s.
	ms := c.open[base : base+maxFlat]
	// inOrder: the names so far are in order; shaped: they are those of
	// c.shape so far, as sameShape checks them.
	inOrder, shaped := true, true
	n, i := 0, lo+1
	for {
		// The name, read as plainName does, without the call.
		if n == maxFlat || i+9 > len(s) || s[i] != '"' {
			return c.giveUp(out, lo, run, i)
		}
		v, stop := peek(s, i+1)
		var j int
		if stop != 0 {
			j = i + 1 + bits.TrailingZeros64(stop)/8
		} else {
			j = skipPlain(s, i+9)
		}
		key := wordKey(v, stop)
		if key == 0 || j+2 >= len(s) || s[j] != '"' {
			return out, lo, run, false // empty, escaped or not ASCII
		}
		if s[j+1] != ':' {
			return c.giveUp(out, lo, run, j+1)
		}
		// Field by field: a composite literal is built aside and
		// copied, and reading it back so soon stalls the CPU.
		m := &ms[n]
		m.key, m.nameLo, m.nameHi, m.off, m.lo = key, i+1, j, i, i
		m.escaped, m.dropped = false, false
		if shaped {
			shaped = n < len(c.shape) && c.shape[n].key == key && c.shape[n].nameHi-c.shape[n].nameLo == j-i-1 &&
				(j-i-1 <= 8 || bytes.Equal(s[i+1:j], c.memberName(&c.shape[n])))
		}
		switch i = j + 2; s[i] {
		case '"':
			k, stop := i+1, uint64(0)
			if _, stop = peek(s, k); stop != 0 {
				k += bits.TrailingZeros64(stop) / 8
			}
			if stop == 0 || s[k] != '"' { // longer, or not plain ASCII
				var reason string
				if k, reason = skipRaw(s, k); reason != "" || k == len(s) || s[k] != '"' {
					return out, lo, run, false
				}
			}
			i = k + 1
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if i = shortNumber(s, i); i < 0 {
				return out, lo, run, false
			}
		case 't':
			i = flatLiteral(s, i, "true")
		case 'f':
			i = flatLiteral(s, i, "false")
		case 'n':
			i = flatLiteral(s, i, "null")
		default:
			return c.giveUp(out, lo, run, i)
		}
		m.hi = i
		if n > 0 && inOrder {
			if p := &ms[n-1]; p.key >= key {
				inOrder = p.key == key && c.compare(p, m) < 0
			}
		}
		n++
		if i == len(s) {
			return out, lo, run, false
		}
		if s[i] == '}' {
			break
		}
		if s[i] != ',' {
			return c.giveUp(out, lo, run, i)
		}
		i++
	}
	end := i + 1
	if inOrder {
		return out, end, run, true // canonical as it is
	}
	order := c.shapeOrder
	if !shaped || n != len(c.shape) {
		var off int
		if order, off = c.sortShape(ms[:n], inArray); off >= 0 {
			return out, lo, run, false // a duplicate name
		}
	}
	out = appendSorted(append(out, s[run:lo]...), ms[:n], order, s, 0, end-lo)
	return out, end, end, true
}

// flatObjects is flatObject for the object at s[lo], a value in f, and
// when f is an array, for the elements after it, which are most likely
// alike, while they are. It sets f.nested, as end would.
func (c *canonicaliser) flatObjects(out []byte, lo, run int, f *frame) ([]byte, int, int, bool) {
	if f == nil {
		return c.flatObject(out, lo, run, false)
	}
	inArray := f.end == ']'
	out, i, run, ok := c.flatObject(out, lo, run, inArray)
	if !ok {
		return out, i, run, false
	}
	f.nested = true
	s := c.src
	for inArray && len(c.exclude) == 0 && i+1 < len(s) && s[i] == ',' && s[i+1] == '{' {
		o, j, r, ok := c.flatObject(out, i+1, run, true)
		if !ok {
			break
		}
		out, i, run = o, j, r
	}
	return out, i, run, true
}

// giveUp is flatObject giving up at s[i]. Whitespace there means the
// document is not written compactly, and parse tries no more objects.
func (c *canonicaliser) giveUp(out []byte, lo, run, i int) ([]byte, int, int, bool) {
	c.spaced = i < len(c.src) && space[c.src[i]]
	return out, lo, run, false
}

// flatLiteral returns the end of word at s[i:], or len(s) if it is not
// there, which flatObject gives up at.
func flatLiteral(s []byte, i int, word string) int {
	if end, err := literal(s, i, word); err == nil {
		return end
	}
	return len(s)
}
