// Package jsontree parses one JSON document strictly (RFC 8259, UTF-8, no
// duplicate member names) into a tree whose every node knows its byte offset
// and its JSON Pointer, so a finding can name file:line:column exactly.
//
// It exists because encoding/json silently keeps the last of two duplicate
// keys and forgets positions, and a linter may do neither.
package jsontree

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Kind is the JSON type of a node.
type Kind uint8

// The JSON types.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"null", "boolean", "number", "string", "array", "object"}

func (k Kind) String() string { return kindNames[k] }

// Node is one JSON value.
//
// Field order keeps the struct at 88 bytes: every value of every file
// checked is one.
type Node struct {
	// Text is the decoded string of a String, or the literal of a Number.
	Text string
	// Items are the elements of an Array.
	Items []*Node
	// Members are the members of an Object in source order. A duplicate
	// name keeps one member (the last value), as most parsers would see it.
	Members []Member

	// parent is the enclosing value. A node does not store its own name or
	// index: Pointer finds them in the parent, which is cheap because it
	// runs only for findings, and saves memory on every node of a set.
	parent *Node

	Offset int  // byte offset of the value's first byte in the source
	Kind   Kind // the JSON type
	True   bool // the value of a Bool
}

// Member is one name/value pair of an object.
type Member struct {
	Key       string
	KeyOffset int
	Value     *Node
}

// Get returns the value of the member named key, or nil. Objects in boundary
// documents are small, so a linear scan beats building a map per object.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Object {
		return nil
	}
	for i := range n.Members {
		if n.Members[i].Key == key {
			return n.Members[i].Value
		}
	}
	return nil
}

// Pointer returns the RFC 6901 JSON Pointer of n ("" for the root).
func (n *Node) Pointer() string {
	if n == nil || n.parent == nil {
		return ""
	}
	var segs []string
	for c := n; c.parent != nil; c = c.parent {
		segs = append(segs, c.parent.tokenOf(c))
	}
	var b strings.Builder
	for i := len(segs) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(segs[i])
	}
	return b.String()
}

// tokenOf returns the reference token naming child in n.
func (n *Node) tokenOf(child *Node) string {
	for i, it := range n.Items {
		if it == child {
			return strconv.Itoa(i)
		}
	}
	for _, m := range n.Members {
		if m.Value == child {
			return EscapePointer(m.Key)
		}
	}
	panic("jsontree: node is not a child of its parent")
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// EscapePointer escapes one reference token for a JSON Pointer.
func EscapePointer(token string) string {
	if strings.ContainsAny(token, "~/") {
		return pointerEscaper.Replace(token)
	}
	return token
}

var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// Nearest resolves a JSON Pointer from n and returns the deepest node that
// exists on its path: the node itself when it exists, otherwise the closest
// enclosing value (where a missing field belongs).
func (n *Node) Nearest(pointer string) *Node {
	if pointer == "" || pointer[0] != '/' {
		return n
	}
	cur := n
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = pointerUnescaper.Replace(tok)
		var next *Node
		switch cur.Kind {
		case Object:
			next = cur.Get(tok)
		case Array:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(cur.Items) {
				next = cur.Items[i]
			}
		}
		if next == nil {
			return cur
		}
		cur = next
	}
	return cur
}

// Strings returns the elements of an array of strings; other elements are
// skipped (the schema reports them).
func (n *Node) Strings() []string {
	if n == nil || n.Kind != Array {
		return nil
	}
	out := make([]string, 0, len(n.Items))
	for _, it := range n.Items {
		if it.Kind == String {
			out = append(out, it.Text)
		}
	}
	return out
}

// Int returns the value of a Number that is an integer.
func (n *Node) Int() (int64, bool) {
	if n == nil || n.Kind != Number {
		return 0, false
	}
	if v, err := strconv.ParseInt(n.Text, 10, 64); err == nil {
		return v, true
	}
	// Integral values spelled 1e2 or 2.0 are still integers to a schema.
	f, err := strconv.ParseFloat(n.Text, 64)
	if err != nil || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// Float returns the value of a Number.
func (n *Node) Float() (float64, bool) {
	if n == nil || n.Kind != Number {
		return 0, false
	}
	f, err := strconv.ParseFloat(n.Text, 64)
	return f, err == nil
}

// Any converts n to the value tree encoding/json would produce with
// UseNumber: map[string]any, []any, string, bool, nil and json.Number.
func (n *Node) Any() any {
	switch n.Kind {
	case Bool:
		return n.True
	case Number:
		return json.Number(n.Text)
	case String:
		return n.Text
	case Array:
		out := make([]any, len(n.Items))
		for i, it := range n.Items {
			out[i] = it.Any()
		}
		return out
	case Object:
		out := make(map[string]any, len(n.Members))
		for _, m := range n.Members {
			out[m.Key] = m.Value.Any()
		}
		return out
	}
	return nil
}

// AppendJSON appends n as compact JSON: members in their order, numbers
// spelled as written (so no digit of a large integer is lost), strings
// escaped as RFC 8259 requires.
func (n *Node) AppendJSON(b []byte) []byte {
	switch n.Kind {
	case Null:
		return append(b, "null"...)
	case Bool:
		return strconv.AppendBool(b, n.True)
	case Number:
		return append(b, n.Text...)
	case String:
		return appendString(b, n.Text)
	case Array:
		b = append(b, '[')
		for i, it := range n.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = it.AppendJSON(b)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	for i, m := range n.Members {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, m.Key)
		b = append(b, ':')
		b = m.Value.AppendJSON(b)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
