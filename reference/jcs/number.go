package jcs

import (
	"math"
	"strconv"
)

// maxIntDigits is the most digits an integer within IEEE-754 double range
// can have (MaxFloat64 is about 1.8e308). Exact mode refuses longer integers
// before writing them, which is what keeps 1e999999 from costing a megabyte.
const maxIntDigits = 309

// maxPadding bounds the zeros exact mode may add to one document beyond the
// digits its literals spell out. Each number is bounded by maxIntDigits,
// but "1e308," repeated would still grow a body about 50-fold; with this
// budget the output stays within the input's size plus 1 MiB.
const maxPadding = 1 << 20

// number parses a number literal and stores its canonical text. The literal
// is validated against the RFC 8259 grammar here, because strconv.ParseFloat
// accepts more (hex, "+1", ".5", "Inf", underscores).
func (p *parser) number() (int, error) {
	s, start := p.src, p.pos
	i := start
	neg := s[i] == '-'
	if neg {
		i++
	}
	intLo := i
	switch {
	case i < len(s) && s[i] == '0':
		i++
		if i < len(s) && isDigit(s[i]) {
			return 0, p.failAt(intLo, "leading zero in number")
		}
	case i < len(s) && isDigit(s[i]):
		i = digits(s, i)
	default:
		return 0, p.failAt(i, "invalid number")
	}
	intHi, fracLo, fracHi := i, i, i
	if i < len(s) && s[i] == '.' {
		fracLo = i + 1
		if i = digits(s, fracLo); i == fracLo {
			return 0, p.failAt(i, "invalid number: no digit after '.'")
		}
		fracHi = i
	}
	exp, hasExp := 0, false
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		hasExp = true
		i++
		expNeg := i < len(s) && s[i] == '-'
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		lo := i
		for ; i < len(s) && isDigit(s[i]); i++ {
			// Saturate: any exponent this large over- or underflows,
			// and ParseFloat still sees the real literal.
			if exp < 1e9 {
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if i == lo {
			return 0, p.failAt(i, "invalid number: no digit in exponent")
		}
		if expNeg {
			exp = -exp
		}
	}
	p.pos = i

	// A plain integer literal is already written the canonical way, save
	// "-0", as long as it is an exact double (15 digits always are) or exact
	// mode wants its digits anyway.
	if fracHi == fracLo && !hasExp {
		if nd := intHi - intLo; nd <= 15 || p.exact && nd < maxIntDigits {
			lo := start
			if neg && s[intLo] == '0' {
				lo++ // -0 is 0
			}
			return p.add(node{kind: kNumber, off: start, lo: lo, hi: i}), nil
		}
	}
	// So is a short plain decimal such as 24.99. Distinct decimals of at
	// most 15 significant digits round to distinct doubles (DBL_DIG), so no
	// other string of that length or shorter reaches this one's double and
	// the shortest round-trip digits ES asks for are the literal's own. It
	// must also be laid out as ES would: no exponent, at least 1e-6 (at most
	// five zeros after "0."), no trailing zero in the fraction.
	if fracHi > fracLo && !hasExp && s[fracHi-1] != '0' {
		sig, ok := intHi-intLo+fracHi-fracLo, true
		if s[intLo] == '0' {
			z := fracLo
			for s[z] == '0' {
				z++
			}
			sig, ok = fracHi-z, z-fracLo <= 5
		}
		if ok && sig <= 15 {
			return p.add(node{kind: kNumber, off: start, lo: start, hi: i}), nil
		}
	}

	lo := len(p.arena)
	if p.exact {
		if done, reason := p.appendExact(neg, s[intLo:intHi], s[fracLo:fracHi], exp, s[start:i]); reason != "" {
			return 0, p.failAt(start, reason)
		} else if done {
			return p.add(node{kind: kNumber, off: start, lo: lo, hi: len(p.arena), inArena: true}), nil
		}
	}
	f, err := strconv.ParseFloat(string(s[start:i]), 64)
	if err != nil { // only ErrRange is possible after the grammar check
		return 0, p.failAt(start, "number outside IEEE-754 double range")
	}
	p.arena = appendES6(p.arena, f)
	return p.add(node{kind: kNumber, off: start, lo: lo, hi: len(p.arena), inArena: true}), nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digits(s []byte, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// maxSafe is 2^53-1 (ECMAScript's Number.MAX_SAFE_INTEGER): every integer
// up to it is exactly a double, and not every one beyond. Its 16 digits are
// compared as text.
const maxSafe = "9007199254740991"

// appendExact appends the exact decimal value of the literal
// intPart.frac × 10^exp when CanonicalizeExact wants it, that is when the
// value is an integer or its magnitude exceeds 2^53-1, and reports whether
// it did; the caller formats any other number the RFC 8785 way. The output
// has no exponent, no leading zeros and no trailing fraction zeros, so each
// value has one spelling; zero is "0".
func (p *parser) appendExact(neg bool, intPart, frac []byte, exp int, lit []byte) (done bool, reason string) {
	// Treat the digits as one string d = intPart+frac with the decimal
	// point after position point.
	n := len(intPart) + len(frac)
	d := func(k int) byte {
		if k < len(intPart) {
			return intPart[k]
		}
		return frac[k-len(intPart)]
	}
	first := 0
	for first < n && d(first) == '0' {
		first++
	}
	if first == n {
		p.arena = append(p.arena, '0')
		return true, ""
	}
	last := n - 1
	for d(last) == '0' {
		last--
	}
	point := len(intPart) + exp
	isInt := last < point
	switch nd := point - first; { // digits before the point
	case nd > maxIntDigits:
		return false, "number outside IEEE-754 double range"
	case nd == maxIntDigits:
		// Only the top of the 309-digit range is out; let ParseFloat
		// decide so both modes accept exactly the same numbers.
		if _, err := strconv.ParseFloat(string(lit), 64); err != nil {
			return false, "number outside IEEE-754 double range"
		}
	case isInt || nd > len(maxSafe):
	case nd < len(maxSafe):
		return false, ""
	default: // a 16-digit integer part and a fraction: beyond 2^53-1?
		for k := range len(maxSafe) {
			if c := d(first + k); c != maxSafe[k] {
				if c < maxSafe[k] {
					return false, ""
				}
				break
			}
		}
	}
	if neg {
		p.arena = append(p.arena, '-')
	}
	for k := first; k < min(point, n); k++ {
		p.arena = append(p.arena, d(k))
	}
	if pad := point - n; pad > 0 {
		if p.padding += pad; p.padding > maxPadding {
			return false, "exact integers expand to more than 1 MiB of zeros"
		}
		for range pad {
			p.arena = append(p.arena, '0')
		}
	}
	if !isInt {
		p.arena = append(p.arena, '.')
		for k := point; k <= last; k++ {
			p.arena = append(p.arena, d(k))
		}
	}
	return true, ""
}

// appendES6 formats a finite double as ECMAScript's Number.prototype.toString
// does, which RFC 8785 section 3.2.2.3 adopts. Both ES and strconv pick the
// shortest digit string that round-trips (closest to the exact value on a
// tie), so only the layout differs: ES uses plain notation for
// 1e-6 <= |f| < 1e21 and otherwise an exponent without leading zeros, which
// strconv pads to two digits ("1e-07").
func appendES6(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // also -0
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	for i := len(dst) - 1; i > n; i-- {
		if dst[i] == 'e' {
			if dst[i+2] == '0' { // "e+0d" or "e-0d"
				dst = append(dst[:i+2], dst[i+3:]...)
			}
			break
		}
	}
	return dst
}
