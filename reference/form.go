package reference

import (
	"encoding/binary"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The canonical form of an application/x-www-form-urlencoded body: its
// pairs decoded ("+" is a space, %XX a byte, the result UTF-8), sorted by
// name in byte order with the values of one name kept in the order sent,
// encoded again with the RFC 3986 unreserved characters as they are and
// every other byte as %XX in upper case, and joined with "&". So
// "b=2&a=%7e1" and "a=~1&b=2" are one payload. An empty segment ("a=1&&b=2",
// a trailing "&") holds no pair, and a segment without "=" is a name with
// the empty value. net/url's ParseQuery and Encode come close but are not
// this (Encode writes a space as "+", ParseQuery refuses ";" and keeps
// invalid UTF-8), and they allocate a map and a string per pair.

// The body is read once: each pair is written to scratch text already in
// its canonical spelling, and the pairs are then sorted by their decoded
// names, which compareEncoded reads off the canonical spelling.

// formText is the scratch memory of one canonicalisation: the pairs in
// canonical spelling back to back, and where each lies in it.
type formText struct {
	text    []byte
	pairs   []formPair
	spare   []formPair // sortFormPairs' other half
	runs    []int      // sortFormPairs' runs
	decoded []byte     // a pair decoded, to check it is UTF-8
}

// formPair is text[name:end]: the name up to eq, then "=" and the value.
// key is the name's first sixteen decoded bytes, big-endian, zero-padded:
// most names differ there (items[0][price], items[0][quantity]), and then
// keys order them; equal keys leave it to the whole names.
type formPair struct {
	key           [2]uint64
	name, eq, end int
}

// lessFormPair reports whether x's name sorts before y's.
func lessFormPair(text []byte, x, y *formPair) bool {
	if x.key != y.key {
		return x.key[0] < y.key[0] || x.key[0] == y.key[0] && x.key[1] < y.key[1]
	}
	return compareEncoded(text[x.name:x.eq], text[y.name:y.eq]) < 0
}

// sortFormPairs sorts pairs by name, stably, and returns them and the
// other buffer. It merges the runs already in order (a client writes
// items[0] to items[9], then items[10] on), with the comparison inlined
// where slices.SortFunc would call it through a function value, which
// cost most of a form's canonicalisation. runs is scratch.
func sortFormPairs(text []byte, pairs, spare []formPair, runs []int) (sorted, other []formPair, scratch []int) {
	n := len(pairs)
	runs = append(runs[:0], 0)
	for i := 1; i < n; i++ {
		if lessFormPair(text, &pairs[i], &pairs[i-1]) {
			runs = append(runs, i)
		}
	}
	runs = append(runs, n) // runs[k]:runs[k+1] is in order
	spare = slices.Grow(spare[:0], n)[:n]
	src, dst := pairs, spare
	for len(runs) > 2 {
		merged := runs[:1]
		for k := 0; k+1 < len(runs); k += 2 {
			lo, mid, hi := runs[k], runs[k+1], n
			if k+2 < len(runs) {
				hi = runs[k+2]
			}
			i, j, d := lo, mid, lo
			for i < mid && j < hi {
				if lessFormPair(text, &src[j], &src[i]) {
					dst[d] = src[j]
					j++
				} else {
					dst[d] = src[i]
					i++
				}
				d++
			}
			d += copy(dst[d:], src[i:mid])
			copy(dst[d:], src[j:hi])
			merged = append(merged, hi)
		}
		runs = merged
		src, dst = dst, src
	}
	return src, dst, runs
}

var formTexts = sync.Pool{New: func() any { return new(formText) }}

// formError says what makes a body no form, with the byte offset.
type formError struct {
	offset int
	reason string
}

func (e *formError) Error() string {
	return "not a valid application/x-www-form-urlencoded body: " + e.reason + " at byte " + strconv.Itoa(e.offset)
}

// appendCanonicalForm appends the canonical form of body to b, without
// the pairs whose name is in exclude, which holds names in canonical
// spelling (formFieldNames).
func appendCanonicalForm(b, body []byte, exclude []string) ([]byte, error) {
	ft := formTexts.Get().(*formText)
	defer func() {
		if cap(ft.text) <= 1<<20 {
			ft.text, ft.pairs, ft.spare = ft.text[:0], ft.pairs[:0], ft.spare[:0]
			formTexts.Put(ft)
		}
	}()
	ft.text = slices.Grow(ft.text, 3*len(body)) // each byte spelt in at most three
	sorted := true
	for i := 0; i <= len(body); i++ { // i at a segment's start, then at the '&' that ends it
		start := i
		p := formPair{name: len(ft.text)}
		var key [16]byte
		var high, highValue bool
		var err error
		if ft.text, i, high, err = appendFormCanonical(ft.text, body, i, &key); err != nil {
			return b, err
		}
		p.eq = len(ft.text)
		ft.text = append(ft.text, '=')
		if i < len(body) && body[i] == '=' {
			if ft.text, i, highValue, err = appendFormCanonical(ft.text, body, i+1, nil); err != nil {
				return b, err
			}
		} else if i == start {
			ft.text = ft.text[:p.name] // an empty segment holds no pair
			continue
		}
		p.end = len(ft.text)
		if high || highValue {
			ft.decoded = appendDecoded(ft.decoded[:0], ft.text[p.name:p.end])
			if !utf8.Valid(ft.decoded) {
				return b, &formError{offset: start, reason: "a pair that is not UTF-8 once decoded"}
			}
		}
		if excluded(exclude, ft.text[p.name:p.eq]) {
			ft.text = ft.text[:p.name]
			continue
		}
		p.key = [2]uint64{binary.BigEndian.Uint64(key[:8]), binary.BigEndian.Uint64(key[8:])}
		if n := len(ft.pairs); n > 0 && sorted {
			sorted = !lessFormPair(ft.text, &p, &ft.pairs[n-1])
		}
		ft.pairs = append(ft.pairs, p)
	}
	text := ft.text
	if !sorted {
		ft.pairs, ft.spare, ft.runs = sortFormPairs(text, ft.pairs, ft.spare, ft.runs)
	}
	for i, p := range ft.pairs {
		if i > 0 {
			b = append(b, '&')
		}
		b = append(b, text[p.name:p.end]...)
	}
	return b, nil
}

func excluded(names []string, name []byte) bool {
	for _, n := range names {
		if n == string(name) { // compared without a copy
			return true
		}
	}
	return false
}

// appendFormCanonical appends the name or value that starts at body[i]
// in canonical spelling: decoded ("+" a space, %XX the byte XX) and
// encoded again (the RFC 3986 unreserved characters, letters, digits, "-",
// ".", "_" and "~", as they are, every other byte as %XX in upper case).
// A name (key not nil, which receives its first sixteen decoded bytes)
// ends at "=" or "&", a value at "&"; next is where it ended. high
// reports a decoded byte beyond ASCII, for the caller to check UTF-8.
func appendFormCanonical(b, body []byte, i int, key *[16]byte) (_ []byte, next int, high bool, _ error) {
	const hex = "0123456789ABCDEF"
	keyed := 0
	if key == nil {
		keyed = len(key) // a value has no key to fill
	}
	for i < len(body) {
		c := body[i]
		if unreserved[c] {
			// Most runs are a few bytes: appended one by one, they cost
			// less than a copy would.
			b = append(b, c)
			if keyed < len(key) {
				key[keyed] = c
				keyed++
			}
			i++
			continue
		}
		j := i
		i++
		switch c {
		case '&':
			return b, j, high, nil
		case '=':
			if key != nil {
				return b, j, high, nil
			}
		case '+':
			c = ' '
		case '%':
			if j+2 >= len(body) || !isHex(body[j+1]) || !isHex(body[j+2]) {
				return b, j, high, &formError{offset: j, reason: "a \"%\" not followed by two hexadecimal digits"}
			}
			c = unhex(body[j+1])<<4 | unhex(body[j+2])
			i = j + 3
			if !unreserved[c] && isUpperHex(body[j+1]) && isUpperHex(body[j+2]) {
				b = append(b, body[j:i]...) // spelt canonically already
				high = high || c >= 0x80
				if keyed < len(key) {
					key[keyed] = c
					keyed++
				}
				continue
			}
		}
		if keyed < len(key) {
			key[keyed] = c
			keyed++
		}
		if unreserved[c] {
			b = append(b, c)
			continue
		}
		high = high || c >= 0x80
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return b, i, high, nil
}

// compareEncoded orders two names in canonical spelling as their decoded
// bytes order. Both are spelt alike up to their first difference, so that
// lies at the same place in a token of each: inside two %XX (whose upper
// case digits order as the bytes do), or at the start of two tokens of
// which at most one is %XX.
func compareEncoded(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	switch {
	case i == n:
		return len(a) - len(b)
	case i >= 1 && a[i-1] == '%', i >= 2 && a[i-2] == '%':
		return int(a[i]) - int(b[i])
	}
	return int(decodedAt(a, i)) - int(decodedAt(b, i))
}

// decodedAt is the byte the token at s[i] stands for.
func decodedAt(s []byte, i int) byte {
	if s[i] == '%' {
		return unhex(s[i+1])<<4 | unhex(s[i+2])
	}
	return s[i]
}

// appendDecoded appends s, in canonical spelling, decoded.
func appendDecoded(b, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		} else {
			b = append(b, s[i])
		}
	}
	return b
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isUpperHex(c byte) bool { return c <= '9' || c <= 'F' && c >= 'A' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

var unreserved = func() (u [256]bool) {
	for c := 0; c < 256; c++ {
		u[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", byte(c)) >= 0
	}
	return u
}()

// formFieldNames returns the names of the form fields exclude_fields
// leaves out, in canonical spelling: each pointer of one reference token
// ("/NAME"), unescaped. A deeper pointer names nothing in a form.
func formFieldNames(pointers []string) []string {
	var names []string
	for _, p := range pointers {
		token, ok := strings.CutPrefix(p, "/")
		if !ok || strings.Contains(token, "/") {
			continue
		}
		name := strings.NewReplacer("~1", "/", "~0", "~").Replace(token)
		encoded, _, _, _ := appendFormCanonical(nil, []byte(url.QueryEscape(name)), 0, nil)
		names = append(names, string(encoded))
	}
	return names
}
