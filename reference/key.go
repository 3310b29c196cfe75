package reference

import (
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
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
	// charset decides ASCII keys for a pattern that is one character class
	// repeated from end to end, as key patterns mostly are; nil for any
	// other.
	charset *charset
}

// charset is a pattern such as ^[A-Za-z0-9-]+$: min to max (-1: no limit)
// characters of a class, of which in holds the ASCII members.
type charset struct {
	in       [utf8.RuneSelf]bool
	min, max int
}

// charsetOf returns the charset that pattern is, or nil.
func charsetOf(pattern *regexp.Regexp) *charset {
	re, err := syntax.Parse(pattern.String(), syntax.Perl) // as regexp.Compile does
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) != 3 ||
		re.Sub[0].Op != syntax.OpBeginText || re.Sub[2].Op != syntax.OpEndText {
		return nil
	}
	cs := &charset{}
	switch rep := re.Sub[1]; rep.Op {
	case syntax.OpStar:
		cs.min, cs.max = 0, -1
	case syntax.OpPlus:
		cs.min, cs.max = 1, -1
	case syntax.OpRepeat:
		cs.min, cs.max = rep.Min, rep.Max
	default:
		return nil
	}
	class := re.Sub[1].Sub[0]
	if class.Op != syntax.OpCharClass {
		return nil
	}
	for i := 0; i < len(class.Rune); i += 2 {
		for r := class.Rune[i]; r <= class.Rune[i+1] && r < utf8.RuneSelf; r++ {
			cs.in[r] = true
		}
	}
	return cs
}

// matches reports whether key matches the pattern, which is declared.
func (k *keyRules) matches(key string) bool {
	if k.charset == nil {
		return k.pattern.MatchString(key)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c >= utf8.RuneSelf {
			return k.pattern.MatchString(key) // counting characters is the pattern's
		} else if !k.charset.in[c] {
			return false
		}
	}
	return len(key) >= k.charset.min && (k.charset.max < 0 || len(key) <= k.charset.max)
}

// parseKey returns the key carried by the values of the key header. The
// IETF Idempotency-Key draft sends the key as a Structured Field String
// ("8e03...", quoted, RFC 8941 section 3.3.3) while most clients send it
// bare; a value starting with a double quote is read as the former, so
// both spellings of one key are the same key. A quoted value with anything
// after the closing quote (such as parameters) is malformed. A comma in a
// bare value is what a proxy makes of two key header fields, merging
// them (RFC 9110, 5.3), so it is refused as two fields are
// (docs/engine.md, HTTP answers).
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
	} else if strings.IndexByte(key, ',') >= 0 {
		return "", keyRepeated
	}
	switch {
	case key == "":
		return "", keyMissing
	case utf8.RuneCountInString(key) > k.maxLength:
		return "", keyTooLong
	case k.pattern != nil && !k.matches(key):
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
		return "send exactly one " + header + " header, holding one key: a comma in a bare key is two header fields merged (RFC 9110, 5.3)"
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
