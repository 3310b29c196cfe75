package jcs

import (
	"errors"
	"fmt"
	"strings"
)

// checkPointer validates an RFC 6901 JSON Pointer used for exclusion.
func checkPointer(ptr string) error {
	if ptr == "" {
		return errors.New(`jcs: cannot exclude the whole document (JSON pointer "")`)
	}
	if ptr[0] != '/' {
		return fmt.Errorf("jcs: JSON pointer %q does not start with '/'", ptr)
	}
	for i := 0; i < len(ptr); i++ {
		if ptr[i] == '~' && (i+1 == len(ptr) || ptr[i+1] != '0' && ptr[i+1] != '1') {
			return fmt.Errorf("jcs: JSON pointer %q has '~' not followed by '0' or '1'", ptr)
		}
	}
	return nil
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

// tokenIs reports whether the reference token tok, once ~1 and ~0 are
// decoded to '/' and '~', equals the unescaped member name.
func tokenIs(tok string, name []byte) bool {
	j := 0
	for i := 0; i < len(tok); i, j = i+1, j+1 {
		c := tok[i]
		if c == '~' {
			i++
			c = "~/"[tok[i]-'0']
		}
		if j == len(name) || name[j] != c {
			return false
		}
	}
	return j == len(name)
}

// arrayIndex parses an RFC 6901 array index: "0" or digits without a
// leading zero.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 9 || len(tok) > 1 && tok[0] == '0' {
		return 0, false
	}
	i := 0
	for _, c := range []byte(tok) {
		if !isDigit(c) {
			return 0, false
		}
		i = i*10 + int(c-'0')
	}
	return i, true
}
