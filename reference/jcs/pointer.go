package jcs

import (
	"errors"
	"fmt"
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
