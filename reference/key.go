package reference

import (
	"regexp"
	"strconv"
	"unicode/utf8"
)

// keyFault is why a request's idempotency key is unusable; keyOK when it
// is fine. Every fault is answered with on_missing, whose detail names it.
type keyFault uint8

const (
	keyOK keyFault = iota
	keyMissing
	keyRepeated
	keyMalformed
	keyTooLong
	keyMismatch // does not match key_format.pattern
	numKeyFaults
)

// keyRules is what a valid key looks like (http_idempotency.key_format).
type keyRules struct {
	maxLength int            // in characters
	pattern   *regexp.Regexp // nil when none is declared
}

// parseKey returns the key carried by the values of the key header. The
// IETF Idempotency-Key draft sends the key as a Structured Field String
// ("8e03...", quoted, RFC 8941 section 3.3.3) while most clients send it
// bare; a value starting with a double quote is read as the former, so
// both spellings of one key are the same key. A quoted value with anything
// after the closing quote (such as parameters) is malformed.
//
// The pattern, like a JSON Schema pattern, is searched for, not anchored:
// write ^...$ to constrain the whole key.
func (k *keyRules) parseKey(values []string) (string, keyFault) {
	switch {
	case len(values) == 0:
		return "", keyMissing
	case len(values) > 1:
		return "", keyRepeated
	}
	key := values[0]
	if key != "" && key[0] == '"' {
		var ok bool
		if key, ok = unquoteSFString(key); !ok {
			return "", keyMalformed
		}
	}
	switch {
	case key == "":
		return "", keyMissing
	case utf8.RuneCountInString(key) > k.maxLength:
		return "", keyTooLong
	case k.pattern != nil && !k.pattern.MatchString(key):
		return "", keyMismatch
	}
	return key, keyOK
}

// describe is the problem detail for a key fault.
func (k *keyRules) describe(f keyFault, header string) string {
	switch f {
	case keyMissing:
		return "this request requires an idempotency key in the " + header + " header"
	case keyRepeated:
		return "send exactly one " + header + " header"
	case keyMalformed:
		return "the " + header + " header starts with a double quote but is not a Structured Field String (RFC 8941): printable ASCII between quotes, with only \\\" and \\\\ escaped"
	case keyTooLong:
		return "the idempotency key is longer than " + strconv.Itoa(k.maxLength) + " characters"
	case keyMismatch:
		return "the idempotency key does not match the pattern " + k.pattern.String()
	}
	return ""
}

// unquoteSFString decodes an RFC 8941 sf-string: printable ASCII between
// double quotes, where only \" and \\ are escapes. It allocates only when
// there is an escape.
func unquoteSFString(v string) (string, bool) {
	var buf []byte // the unescaped text, once an escape is seen
	for i := 1; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			if i != len(v)-1 {
				return "", false
			}
			if buf == nil {
				return v[1:i], true
			}
			return string(buf), true
		case c == '\\':
			if i+1 == len(v) || v[i+1] != '"' && v[i+1] != '\\' {
				return "", false
			}
			if buf == nil {
				buf = append(make([]byte, 0, len(v)), v[1:i]...)
			}
			i++
			buf = append(buf, v[i])
		case c < 0x20 || c > 0x7e:
			return "", false
		default:
			if buf != nil {
				buf = append(buf, c)
			}
		}
	}
	return "", false // no closing quote
}
