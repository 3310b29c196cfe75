package conform

import (
	"unicode/utf16"
	"unicode/utf8"
)

// MinSecretLength is the shortest extra header value conform accepts:
// every value is redacted as a secret, and a shorter one would match
// ordinary text and garble the output while hiding little.
const MinSecretLength = 8

// redactor replaces every spelling of the secrets in text that came from
// the target (or from the run's own errors, which may quote it) by
// "<redacted>". A target may echo a secret as it is, JSON-escaped in any
// of the ways JSON allows ("\/", "\u0041", surrogate pairs), or
// percent-encoded (with "+" for a space); each character of a secret is
// matched in any of these forms, mixed, so no escaping can hide one. It
// works on raw bytes before anything is cut or escaped for display: cut
// first, a secret would survive in part.
type redactor struct {
	secrets [][]rune
	// span is the most bytes one spelling of a secret takes, so that a
	// caller showing a prefix of a text can redact just enough of it.
	span int
}

func newRedactor(secrets []string) *redactor {
	r := &redactor{}
	for _, s := range secrets {
		rs := []rune(s)
		r.secrets = append(r.secrets, rs)
		r.span = max(r.span, 12*len(rs)) // a surrogate pair: \uXXXX\uXXXX
	}
	return r
}

// bytes returns b with every spelling of a secret replaced, b itself when
// there is none.
func (r *redactor) bytes(b []byte) []byte {
	if r == nil || len(r.secrets) == 0 {
		return b
	}
	var out []byte
	done := 0 // b[:done] is in out, or there is no out yet
	for i := 0; i < len(b); {
		n := r.matchAt(b[i:])
		if n == 0 {
			i++
			continue
		}
		out = append(append(out, b[done:i]...), redacted...)
		i += n
		done = i
	}
	if out == nil {
		return b
	}
	return append(out, b[done:]...)
}

// text is bytes for a string.
func (r *redactor) text(s string) string {
	if r == nil || len(r.secrets) == 0 {
		return s
	}
	return string(r.bytes([]byte(s)))
}

// prefix returns the redacted form of b cut to at most n bytes (at a
// character boundary), and whether anything was cut. Only as much of b
// is scanned as can reach into the first n bytes once redacted.
func (r *redactor) prefix(b []byte, n int) ([]byte, bool) {
	span := 0
	if r != nil {
		span = r.span
	}
	limit := n + span
	var red []byte
	for {
		red = r.bytes(b[:min(limit, len(b))])
		// A secret starting within the first n bytes of red ends within
		// it once red holds n+span bytes, whatever redaction shrank.
		if limit >= len(b) || len(red) >= n+span {
			break
		}
		limit *= 2
	}
	if len(red) <= n {
		return red, limit < len(b)
	}
	cut := red[:n]
	for len(cut) > n-utf8.UTFMax && !utf8.Valid(cut) {
		cut = cut[:len(cut)-1] // do not split a character
	}
	return cut, true
}

// matchAt returns the length of the spelling of a secret b starts with,
// or 0.
func (r *redactor) matchAt(b []byte) int {
	for _, s := range r.secrets {
		if n := matchSecret(b, s); n > 0 {
			return n
		}
	}
	return 0
}

// matchSecret returns the length of the spelling of secret b starts
// with, or 0. Where a character has several spellings at this point of b
// ("%" itself or "%25"), each is tried.
func matchSecret(b []byte, secret []rune) int {
	if len(secret) == 0 {
		return 0
	}
	for _, n := range runeSpellings(b, secret[0]) {
		if n == 0 {
			continue
		}
		if len(secret) == 1 {
			return n
		}
		if rest := matchSecret(b[n:], secret[1:]); rest > 0 {
			return n + rest
		}
	}
	return 0
}

// runeSpellings returns the lengths of the spellings of c b starts with
// (0 for none): a JSON escape of c, "+" for a space, c itself, and c
// percent-encoded (each byte of a multi-byte character as itself or
// percent-encoded).
func runeSpellings(b []byte, c rune) [4]int {
	var out [4]int
	if len(b) == 0 {
		return out
	}
	out[0] = matchEscape(b, c)
	if c == ' ' && b[0] == '+' {
		out[1] = 1
	}
	if c < utf8.RuneSelf {
		if b[0] == byte(c) {
			out[2] = 1
		}
		if percentByte(b) == int(c) {
			out[3] = 3
		}
		return out
	}
	var enc [utf8.UTFMax]byte
	at := 0
	for _, x := range enc[:utf8.EncodeRune(enc[:], c)] {
		switch {
		case percentByte(b[at:]) == int(x):
			at += 3
		case at < len(b) && b[at] == x:
			at++
		default:
			return out
		}
	}
	out[2] = at
	return out
}

// percentByte returns the byte b starts encoding as %XX, or -1.
func percentByte(b []byte) int {
	if len(b) < 3 || b[0] != '%' {
		return -1
	}
	return hexValue(b[1:3])
}

// matchEscape matches the JSON escapes of c: a short one (\" \\ \/ \b \f
// \n \r \t) or \uXXXX, a surrogate pair for c beyond the BMP. Go's
// strconv.Quote writes the same escapes for the characters a header value
// may hold.
func matchEscape(b []byte, c rune) int {
	if len(b) < 2 || b[0] != '\\' {
		return 0
	}
	if short, ok := shortEscapes[c]; ok && b[1] == short {
		return 2
	}
	if c > 0xffff {
		hi, lo := utf16.EncodeRune(c)
		if len(b) >= 12 && b[1] == 'u' && hexValue(b[2:6]) == int(hi) && b[6] == '\\' && b[7] == 'u' && hexValue(b[8:12]) == int(lo) {
			return 12
		}
		return 0
	}
	if len(b) >= 6 && b[1] == 'u' && hexValue(b[2:6]) == int(c) {
		return 6
	}
	return 0
}

var shortEscapes = map[rune]byte{'"': '"', '\\': '\\', '/': '/', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// hexValue reads hex digits of either case, -1 when h holds another byte.
func hexValue(h []byte) int {
	v := 0
	for _, d := range h {
		switch {
		case '0' <= d && d <= '9':
			v = v<<4 | int(d-'0')
		case 'a' <= d && d <= 'f':
			v = v<<4 | int(d-'a'+10)
		case 'A' <= d && d <= 'F':
			v = v<<4 | int(d-'A'+10)
		default:
			return -1
		}
	}
	return v
}
