package conform

import (
	"crypto/rand"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/idemlint/idemlint/reference/jcs"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// Members conform adds to a probe's JSON body. A fresh probe carries a
// fresh NonceField, so no two probes send one payload and a target can
// never answer a probe with another probe's stored response, whatever it
// keys on. The others exist only where the probe needs them.
const (
	// NonceField holds a fresh UUIDv4 on every fresh payload.
	NonceField = "idemlint_probe_nonce"
	// NumberField is added (as 1, then re-spelt 1.0) by CF06 when the
	// body has no integer of its own to re-spell.
	NumberField = "idemlint_probe_n"
	// AmountField is 100 and then "100" in CF10.
	AmountField = "idemlint_probe_amount"
	// BigField is 9007199254740993 and then 9007199254740992 in CF11.
	BigField = "idemlint_probe_big"
)

// The two integers of CF11: they round to one IEEE-754 double, so a
// fingerprint that goes through float64 confuses them.
const (
	bigExact   = "9007199254740993"
	bigRounded = "9007199254740992"
)

// newUUID returns a random UUIDv4 (RFC 9562): a probe's key or nonce.
func newUUID() string {
	var b [16]byte
	// crypto/rand.Read never fails (Go 1.24+): it crashes the program instead.
	rand.Read(b[:])         //nolint:errcheck
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant 10
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// field is a member a probe adds to the body.
type field struct {
	name  string
	value *jsontree.Node
}

func str(s string) *jsontree.Node      { return &jsontree.Node{Kind: jsontree.String, Text: s} }
func number(lit string) *jsontree.Node { return &jsontree.Node{Kind: jsontree.Number, Text: lit} }

// payload is the body of op's probes with nonce and fields.
func payload(op *operation, nonce string, fields ...field) *jsontree.Node {
	return withFields(op.base, append([]field{{NonceField, str(nonce)}}, fields...)...)
}

// withFields returns the object base with fields added at its end, each
// replacing a member of the same name (a duplicate name would make the
// body invalid I-JSON, which the engine refuses with 400). base is left
// untouched.
func withFields(base *jsontree.Node, fields ...field) *jsontree.Node {
	out := &jsontree.Node{Kind: jsontree.Object, Members: make([]jsontree.Member, 0, len(base.Members)+len(fields))}
	for _, m := range base.Members {
		if !hasField(fields, m.Key) {
			out.Members = append(out.Members, m)
		}
	}
	for _, f := range fields {
		out.Members = append(out.Members, jsontree.Member{Key: f.name, Value: f.value})
	}
	return out
}

func hasField(fields []field, name string) bool {
	for _, f := range fields {
		if f.name == name {
			return true
		}
	}
	return false
}

// formMediaType is the media type of form bodies.
const formMediaType = "application/x-www-form-urlencoded"

// encode writes a probe body as op sends it: a form, or compact JSON.
func (op *operation) encode(n *jsontree.Node) []byte {
	if op.form {
		return appendForm(nil, n, "", false)
	}
	return encode(n)
}

// reserialise writes a probe body as op sends it, spelt otherwise: a
// form's pairs in reverse order (the values of one name keep theirs), or
// JSON re-serialised.
func (op *operation) reserialise(n *jsontree.Node) []byte {
	if op.form {
		return appendForm(nil, n, "", true)
	}
	return reserialise(n)
}

// appendForm writes n, a JSON object, as form pairs: a member's name is
// its path in brackets (items[0][price]), as Stripe and PHP spell nested
// fields; a string or number is its text, a literal its word, null the
// empty value. reversed writes the members of every object in reverse
// order; the items of an array, the values of one name, keep theirs.
func appendForm(b []byte, n *jsontree.Node, name string, reversed bool) []byte {
	pair := func(value string) []byte {
		if len(b) > 0 {
			b = append(b, '&')
		}
		return append(append(append(b, url.QueryEscape(name)...), '='), url.QueryEscape(value)...)
	}
	switch n.Kind {
	case jsontree.Object:
		for i := range n.Members {
			m := n.Members[i]
			if reversed {
				m = n.Members[len(n.Members)-1-i]
			}
			b = appendForm(b, m.Value, formName(name, m.Key), reversed)
		}
		return b
	case jsontree.Array:
		for i, it := range n.Items {
			b = appendForm(b, it, formName(name, strconv.Itoa(i)), reversed)
		}
		return b
	case jsontree.String, jsontree.Number:
		return pair(n.Text)
	case jsontree.Bool:
		return pair(strconv.FormatBool(n.True))
	default:
		return pair("")
	}
}

func formName(parent, member string) string {
	if parent == "" {
		return member
	}
	return parent + "[" + member + "]"
}

// encode writes n as compact JSON: members in order, numbers exactly as
// they were spelt (so 9007199254740993 never goes through a float64).
func encode(n *jsontree.Node) []byte { return appendJSON(nil, n, false, 0) }

// reserialise writes n as the same payload spelt otherwise: members in
// reverse order at every level, indented with spaces around the colons,
// and every integer a float64 holds exactly written with a fraction
// (2 as 2.0). RFC 8785 canonicalises both spellings alike, so a
// canonical_json fingerprint must not tell them apart (CF06).
func reserialise(n *jsontree.Node) []byte { return appendJSON(nil, n, true, 0) }

func appendJSON(b []byte, n *jsontree.Node, respell bool, depth int) []byte {
	switch n.Kind {
	case jsontree.Null:
		return append(b, "null"...)
	case jsontree.Bool:
		if n.True {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case jsontree.Number:
		b = append(b, n.Text...)
		if respell && safeInteger(n.Text) {
			b = append(b, ".0"...)
		}
		return b
	case jsontree.String:
		return jcs.AppendString(b, n.Text)
	case jsontree.Array:
		b = append(b, '[')
		for i, it := range n.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = indent(b, respell, depth+1)
			b = appendJSON(b, it, respell, depth+1)
		}
		if len(n.Items) > 0 {
			b = indent(b, respell, depth)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	for i := range n.Members {
		m := n.Members[i]
		if respell {
			m = n.Members[len(n.Members)-1-i]
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = indent(b, respell, depth+1)
		b = jcs.AppendString(b, m.Key)
		if respell {
			b = append(b, " : "...)
		} else {
			b = append(b, ':')
		}
		b = appendJSON(b, m.Value, respell, depth+1)
	}
	if len(n.Members) > 0 {
		b = indent(b, respell, depth)
	}
	return append(b, '}')
}

func indent(b []byte, on bool, depth int) []byte {
	if !on {
		return b
	}
	b = append(b, '\n')
	for range depth {
		b = append(b, "  "...)
	}
	return b
}

// safeInteger reports whether lit is an integer literal that a float64
// holds exactly (at most 15 digits), so that writing it as lit.0 spells
// the same number.
func safeInteger(lit string) bool {
	digits := strings.TrimPrefix(lit, "-")
	if digits == "" || len(digits) > 15 {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

// hasSafeInteger reports whether n holds an integer reserialise re-spells.
func hasSafeInteger(n *jsontree.Node) bool {
	switch n.Kind {
	case jsontree.Number:
		return safeInteger(n.Text)
	case jsontree.Array:
		for _, it := range n.Items {
			if hasSafeInteger(it) {
				return true
			}
		}
	case jsontree.Object:
		for _, m := range n.Members {
			if hasSafeInteger(m.Value) {
				return true
			}
		}
	}
	return false
}
