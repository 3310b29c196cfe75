package boundary

import (
	"strconv"
	"strings"

	"github.com/idemlint/idemlint/checks/jsontree"
)

// Pos names a place in a document: a small integer resolved on output by
// Document.Place, like go/token.Pos. The zero Pos names no place.
type Pos int32

// NoPos is the zero Pos.
const NoPos Pos = 0

// State says whether a field was written and whether it had a type the
// model can read.
type State uint8

// The states of a field.
const (
	// Absent: the document does not have the field.
	Absent State = iota
	// Invalid: the field is there, but its JSON type (or range, for an
	// integer beyond int64) is not what the model reads; the schema check
	// (IDL002) reports it, so rules treat its value as unknown.
	Invalid
	// Valid: the field is there and its Value holds what it says.
	Valid
)

// Field is the presence, validity and place of one value of a document.
// Every leaf and section of the model embeds one.
type Field struct {
	Pos   Pos
	State State
}

// Present reports whether the document has the field, whatever its type.
func (f Field) Present() bool { return f.State != Absent }

// OK reports whether the field is present and readable.
func (f Field) OK() bool { return f.State == Valid }

// String is a string value.
type String struct {
	Field
	Value string // "" unless OK
}

// Int is an integer value; a number that is not an integer within int64
// is Invalid.
type Int struct {
	Field
	Value int64 // 0 unless OK
}

// Bool is a boolean value.
type Bool struct {
	Field
	Value bool // false unless OK
}

// StringList is an array of strings. The list is OK when it is an array;
// an item of another type is kept as an Invalid item, so indexes match
// the document.
type StringList struct {
	Field
	Items []String
}

// Values returns the readable items' values.
func (l StringList) Values() []string {
	out := make([]string, 0, len(l.Items))
	for _, it := range l.Items {
		if it.OK() {
			out = append(out, it.Value)
		}
	}
	return out
}

// Contains reports whether an item equals s.
func (l StringList) Contains(s string) bool {
	for _, it := range l.Items {
		if it.OK() && it.Value == s {
			return true
		}
	}
	return false
}

// FindFold returns the first item equal to s case-insensitively.
func (l StringList) FindFold(s string) (String, bool) {
	for _, it := range l.Items {
		if it.OK() && strings.EqualFold(it.Value, s) {
			return it, true
		}
	}
	return String{}, false
}

// place is where a value of the model was written: its line and column
// (computed while the source was at hand) and its JSON Pointer, kept as
// the parent's place and this value's member name or array index, so a
// pointer is built only for the few values a finding names.
type place struct {
	line, col int32
	parent    Pos
	index     int32  // array index; -1 for an object member
	name      string // member name; a constant of the decoder or a cloned key
}

// Place is a resolved Pos.
type Place struct {
	Line    int // 1-based
	Column  int // 1-based, in Unicode code points
	Pointer string
}

// Place resolves p. The zero Pos resolves to the document itself, at 1:1.
func (d *Document) Place(p Pos) Place {
	if p <= 0 || int(p) >= len(d.places) {
		return Place{Line: 1, Column: 1}
	}
	pl := d.places[p]
	return Place{Line: int(pl.line), Column: int(pl.col), Pointer: d.Pointer(p)}
}

// Pointer returns the JSON Pointer of the value at p.
func (d *Document) Pointer(p Pos) string {
	if p <= 1 || int(p) >= len(d.places) {
		return ""
	}
	var segs []string
	for q := p; q > 1; q = d.places[q].parent {
		pl := &d.places[q]
		if pl.index >= 0 {
			segs = append(segs, strconv.Itoa(int(pl.index)))
		} else {
			segs = append(segs, jsontree.EscapePointer(pl.name))
		}
	}
	var b strings.Builder
	for i := len(segs) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(segs[i])
	}
	return b.String()
}

// Member returns the pointer of the member name of the object at p:
// where a missing field belongs.
func (d *Document) Member(p Pos, name string) string {
	return d.Pointer(p) + "/" + jsontree.EscapePointer(name)
}
