package reference

import (
	"encoding/binary"
	"math/bits"
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

// Most pairs a client sends are spelt canonically already (letters,
// digits and upper-case %XX of the other bytes): such a pair is used where
// it lies, in a copy of the body, after one scan that copies nothing. Only
// the others are decoded and spelt again, after that copy. The pairs are
// then sorted by their decoded names, which compareEncoded reads off the
// canonical spelling.

// formText is the scratch memory of one canonicalisation: a copy of the
// body followed by the pairs spelt again, and where each pair lies in it.
type formText struct {
	text    []byte
	pairs   []formPair
	spare   []formPair // sortFormPairs' other half
	runs    []int      // where each run of pairs in order starts
	decoded []byte     // a pair decoded, to check it is UTF-8
}

// formPair is text[name:end]: the name up to eq, then "=" and the value.
type formPair struct {
	name, eq, end int
}

// lessFormPair reports whether x's name sorts before y's.
func lessFormPair(text []byte, x, y *formPair) bool {
	return compareEncoded(text[x.name:x.eq], text[y.name:y.eq]) < 0
}

// sortFormPairs sorts pairs by name, stably, and returns them and the
// other buffer. runs holds where each run of pairs already in order
// starts (a client writes items[0] to items[9], then items[10] on): it
// merges them two by two. runs is scratch.
func sortFormPairs(text []byte, pairs, spare []formPair, runs []int) (sorted, other []formPair, scratch []int) {
	n := len(pairs)
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
			if mid < hi {
				mergeFormPairs(text, dst, src, lo, mid, hi)
			} else {
				copy(dst[lo:hi], src[lo:hi]) // the last run has no partner
			}
			merged = append(merged, hi)
		}
		runs = merged
		src, dst = dst, src
	}
	return src, dst, runs
}

// mergeFormPairs merges src[lo:mid] and src[mid:hi], each in order, into
// dst[lo:hi], stably. The pairs of the left run that sort before all of
// the right run, and those of the right run that sort after all of the
// left run, are found by binary search and copied: the runs a client
// writes interleave in one place (items[10] to items[19] between items[1]
// and items[2]). The comparison is inlined where slices.SortStableFunc
// would call it through a function value, which cost most of a form's
// canonicalisation.
func mergeFormPairs(text []byte, dst, src []formPair, lo, mid, hi int) {
	i, top := lo, mid // src[lo:i] sort before src[mid]
	for i < top {
		if h := int(uint(i+top) >> 1); lessFormPair(text, &src[mid], &src[h]) {
			top = h
		} else {
			i = h + 1
		}
	}
	j, bottom := hi, mid // src[j:hi] sort after src[mid-1]
	for bottom < j {
		if h := int(uint(bottom+j) >> 1); lessFormPair(text, &src[h], &src[mid-1]) {
			bottom = h + 1
		} else {
			j = h
		}
	}
	copy(dst[lo:i], src[lo:i])
	copy(dst[j:hi], src[j:hi])
	l, r, d := i, mid, i
	for l < mid && r < j {
		if lessFormPair(text, &src[r], &src[l]) {
			dst[d] = src[r]
			r++
		} else {
			dst[d] = src[l]
			l++
		}
		d++
	}
	d += copy(dst[d:], src[l:mid])
	copy(dst[d:], src[r:j])
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
	// The copy, then each byte spelt again in at most three.
	ft.text = append(slices.Grow(ft.text[:0], 4*len(body)), body...)
	ft.runs = append(ft.runs[:0], 0)
	for i := 0; i <= len(body); i++ { // i at a segment's start, then at the '&' that ends it
		start := i
		var p formPair
		var high bool
		if eq, end, h, ok := canonicalPair(body, i); ok {
			p, high, i = formPair{name: start, eq: eq, end: end}, h, end
		} else {
			p.name = len(ft.text)
			var highValue bool
			var err error
			if ft.text, i, high, err = appendFormCanonical(ft.text, body, i, true); err != nil {
				return b, err
			}
			p.eq = len(ft.text)
			ft.text = append(ft.text, '=')
			if i < len(body) && body[i] == '=' {
				if ft.text, i, highValue, err = appendFormCanonical(ft.text, body, i+1, false); err != nil {
					return b, err
				}
			} else if i == start {
				ft.text = ft.text[:p.name] // an empty segment holds no pair
				continue
			}
			p.end = len(ft.text)
			high = high || highValue
		}
		if high {
			ft.decoded = appendDecoded(ft.decoded[:0], ft.text[p.name:p.end])
			if !utf8.Valid(ft.decoded) {
				return b, &formError{offset: start, reason: "a pair that is not UTF-8 once decoded"}
			}
		}
		if excluded(exclude, ft.text[p.name:p.eq]) {
			if p.name >= len(body) {
				ft.text = ft.text[:p.name] // spelt again: its text is not needed
			}
			continue
		}
		if n := len(ft.pairs); n > 0 && lessFormPair(ft.text, &p, &ft.pairs[n-1]) {
			ft.runs = append(ft.runs, n) // a run starts
		}
		ft.pairs = append(ft.pairs, p)
	}
	text := ft.text
	if len(ft.runs) > 1 {
		ft.pairs, ft.spare, ft.runs = sortFormPairs(text, ft.pairs, ft.spare, ft.runs)
	}
	// Pairs that follow one another in the body, as most still do once
	// sorted, are copied as one: text[lo:hi].
	lo, hi := 0, 0
	for i, p := range ft.pairs {
		if i > 0 && p.name == hi+1 && text[hi] == '&' {
			hi = p.end
			continue
		}
		if i > 0 {
			b = append(append(b, text[lo:hi]...), '&')
		}
		lo, hi = p.name, p.end
	}
	return append(b, text[lo:hi]...), nil
}

// canonicalPair reports whether the segment at body[i] is a pair spelt
// canonically already: a name, "=", and a value of unreserved characters
// and upper-case %XX of other bytes, up to "&" or the end. eq is where its
// "=" lies, end where it ends; high reports a %XX beyond ASCII, for the
// caller to check UTF-8. Runs of unreserved characters, most of a body,
// cost a table look-up a byte.
func canonicalPair(body []byte, i int) (eq, end int, high, ok bool) {
	eq = -1
	for {
		for i < len(body) && unreserved[body[i]] {
			i++
		}
		if i == len(body) {
			return eq, i, high, eq >= 0
		}
		switch body[i] {
		case '&':
			return eq, i, high, eq >= 0
		case '=':
			if eq < 0 {
				eq = i
				i++
				continue
			}
		case '%':
			if i+2 < len(body) {
				if hi, lo := upperHexValue[body[i+1]], upperHexValue[body[i+2]]; hi|lo < 16 && !unreserved[hi<<4|lo] {
					high = high || hi >= 8
					i += 3
					continue
				}
			}
		}
		return eq, i, high, false
	}
}

func excluded(names []string, name []byte) bool {
	for _, n := range names {
		if n == string(name) { // compared without a copy
			return true
		}
	}
	return false
}

// appendFormCanonical appends the name (name true) or value that starts
// at body[i] in canonical spelling: decoded ("+" a space, %XX the byte XX)
// and encoded again (the RFC 3986 unreserved characters, letters, digits,
// "-", ".", "_" and "~", as they are, every other byte as %XX in upper
// case). A name ends at "=" or "&", a value at "&"; next is where it
// ended. high reports a decoded byte beyond ASCII, for the caller to check
// UTF-8.
func appendFormCanonical(b, body []byte, i int, name bool) (_ []byte, next int, high bool, _ error) {
	const hex = "0123456789ABCDEF"
	for i < len(body) {
		c := body[i]
		if unreserved[c] {
			b = append(b, c)
			i++
			continue
		}
		j := i
		i++
		switch c {
		case '&':
			return b, j, high, nil
		case '=':
			if name {
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
	for ; i+8 <= n; i += 8 { // eight bytes at a time: names share long prefixes
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			i += bits.TrailingZeros64(x) / 8
			break
		}
	}
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

// upperHexValue is the value of a digit of canonical %XX: 0-9 and A-F;
// 0xFF for any other byte.
var upperHexValue = func() (v [256]byte) {
	for c := range v {
		v[c] = 0xFF
	}
	for i, c := range "0123456789ABCDEF" {
		v[c] = byte(i)
	}
	return v
}()

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
		encoded, _, _, _ := appendFormCanonical(nil, []byte(url.QueryEscape(name)), 0, false)
		names = append(names, string(encoded))
	}
	return names
}
