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

// number is a number literal, s[start:end], split as the RFC 8259 grammar
// reads it: -?int(.frac)?(e exp)?.
type number struct {
	start, end     int
	neg            bool
	intLo, intHi   int
	fracLo, fracHi int // fracLo == fracHi: no fraction
	exp            int
	hasExp         bool
}

// scanNumber reads the number literal at s[start:] into n. It checks the RFC 8259
// grammar, because strconv.ParseFloat accepts more (hex, "+1", ".5",
// "Inf", underscores).
func scanNumber(s []byte, start int, n *number) *Error {
	*n = number{start: start}
	i := start
	if n.neg = s[i] == '-'; n.neg {
		i++
	}
	n.intLo = i
	switch {
	case i < len(s) && s[i] == '0':
		i++
		if i < len(s) && isDigit(s[i]) {
			return failAt(s, n.intLo, "leading zero in number")
		}
	case i < len(s) && isDigit(s[i]):
		i = digits(s, i)
	default:
		return failAt(s, i, "invalid number")
	}
	n.intHi, n.fracLo, n.fracHi = i, i, i
	if i < len(s) && s[i] == '.' {
		n.fracLo = i + 1
		if i = digits(s, n.fracLo); i == n.fracLo {
			return failAt(s, i, "invalid number: no digit after '.'")
		}
		n.fracHi = i
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		n.hasExp = true
		i++
		expNeg := i < len(s) && s[i] == '-'
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		lo := i
		for ; i < len(s) && isDigit(s[i]); i++ {
			// Saturate: any exponent this large over- or underflows,
			// and ParseFloat still sees the real literal.
			if n.exp < 1e9 {
				n.exp = n.exp*10 + int(s[i]-'0')
			}
		}
		if i == lo {
			return failAt(s, i, "invalid number: no digit in exponent")
		}
		if expNeg {
			n.exp = -n.exp
		}
	}
	n.end = i
	return nil
}

// verbatim reports whether the literal is written the canonical way
// already, the common case.
func (n *number) verbatim(s []byte, exact bool) bool {
	if n.hasExp {
		return false
	}
	// A plain integer is, save "-0", as long as it is an exact double (15
	// digits always are) or exact mode wants its digits anyway.
	if n.fracHi == n.fracLo {
		nd := n.intHi - n.intLo
		return (nd <= 15 || exact && nd < maxIntDigits) && !(n.neg && s[n.intLo] == '0')
	}
	// So is a short plain decimal such as 24.99. Distinct decimals of at
	// most 15 significant digits round to distinct doubles (DBL_DIG), so no
	// other string of that length or shorter reaches this one's double and
	// the shortest round-trip digits ES asks for are the literal's own. It
	// must also be laid out as ES would: at least 1e-6 (at most five zeros
	// after "0."), no trailing zero in the fraction.
	if s[n.fracHi-1] == '0' {
		return false
	}
	if s[n.intLo] != '0' {
		return n.intHi-n.intLo+n.fracHi-n.fracLo <= 15
	}
	z := n.fracLo
	for s[z] == '0' {
		z++
	}
	return z-n.fracLo <= 5 && n.fracHi-z <= 15
}

// shortNumber returns the end of the number literal at s[i:] when it is
// an integer or a plain decimal of at most 15 significant digits, written
// the canonical way, or -1. For the numbers most bodies hold it finds what
// scanNumber and verbatim would, in a fraction of the time.
func shortNumber(s []byte, i int) int {
	j := i
	if s[j] == '-' {
		j++
	}
	intLo := j
	j = digits(s, j)
	sig := j - intLo
	if sig == 0 || sig > 15 || s[intLo] == '0' && sig > 1 {
		return -1 // not a number, too long, or a leading zero
	}
	if j < len(s) && s[j] == '.' {
		fracLo := j + 1
		if j = digits(s, fracLo); j == fracLo || s[j-1] == '0' {
			return -1 // no digit after '.', or a trailing zero
		}
		if s[intLo] != '0' {
			sig += j - fracLo
		} else {
			z := fracLo
			for s[z] == '0' { // stops before j: s[j-1] is not '0'
				z++
			}
			if z-fracLo > 5 {
				return -1 // below 1e-6, which ES writes with an exponent
			}
			sig = j - z
		}
	} else if s[intLo] == '0' && intLo > i {
		return -1 // -0
	}
	if sig > 15 || j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		return -1
	}
	return j
}

// appendNumber appends the canonical text of the literal n to dst.
// *padding counts the zeros exact mode added to the document so far.
func appendNumber(dst, s []byte, n *number, exact bool, padding *int) ([]byte, *Error) {
	lit := s[n.start:n.end]
	switch {
	case n.verbatim(s, exact):
		return append(dst, lit...), nil
	case !n.hasExp && n.fracHi == n.fracLo && n.neg && s[n.intLo] == '0':
		return append(dst, '0'), nil // -0 is 0
	}
	if exact {
		out, done, reason := appendExact(dst, padding, n.neg, s[n.intLo:n.intHi], s[n.fracLo:n.fracHi], n.exp, lit)
		if reason != "" {
			return dst, failAt(s, n.start, reason)
		}
		if done {
			return out, nil
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil { // only ErrRange is possible after the grammar check
		return dst, failAt(s, n.start, "number outside IEEE-754 double range")
	}
	return appendES6(dst, f), nil
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

// appendExact appends to dst the exact decimal value of the literal
// intPart.frac × 10^exp when CanonicalizeExact wants it, that is when the
// value is an integer or its magnitude exceeds 2^53-1, and reports whether
// it did; the caller formats any other number the RFC 8785 way. The output
// has no exponent, no leading zeros and no trailing fraction zeros, so each
// value has one spelling; zero is "0".
func appendExact(dst []byte, padding *int, neg bool, intPart, frac []byte, exp int, lit []byte) (out []byte, done bool, reason string) {
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
		dst = append(dst, '0')
		return dst, true, ""
	}
	last := n - 1
	for d(last) == '0' {
		last--
	}
	point := len(intPart) + exp
	isInt := last < point
	switch nd := point - first; { // digits before the point
	case nd > maxIntDigits:
		return dst, false, "number outside IEEE-754 double range"
	case nd == maxIntDigits:
		// Only the top of the 309-digit range is out; let ParseFloat
		// decide so both modes accept exactly the same numbers.
		if _, err := strconv.ParseFloat(string(lit), 64); err != nil {
			return dst, false, "number outside IEEE-754 double range"
		}
	case isInt || nd > len(maxSafe):
	case nd < len(maxSafe):
		return dst, false, ""
	default: // a 16-digit integer part and a fraction: beyond 2^53-1?
		for k := range len(maxSafe) {
			if c := d(first + k); c != maxSafe[k] {
				if c < maxSafe[k] {
					return dst, false, ""
				}
				break
			}
		}
	}
	if neg {
		dst = append(dst, '-')
	}
	for k := first; k < min(point, n); k++ {
		dst = append(dst, d(k))
	}
	if pad := point - n; pad > 0 {
		if *padding += pad; *padding > maxPadding {
			return dst, false, "exact integers expand to more than 1 MiB of zeros"
		}
		for range pad {
			dst = append(dst, '0')
		}
	}
	if !isInt {
		dst = append(dst, '.')
		for k := point; k <= last; k++ {
			dst = append(dst, d(k))
		}
	}
	return dst, true, ""
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
