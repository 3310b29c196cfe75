package boundary

import (
	"strconv"
	"strings"

	"github.com/idemlint/idemlint/schemas/jsontree"
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

// A place is where a value of the model was written: its line and column
// (computed while the source was at hand) and its JSON Pointer, kept as
// the parent's place and this value's member name or array index, so a
// pointer is built only for the few values a finding names. A set keeps
// one per decoded value of every document, so the common case is packed
// into 8 bytes: lineCol is line<<colBits | column, and link is the
// distance back to the parent's place <<refBits | the ref (see wide).
// A place that does not fit (a line past a million, a column past 4095,
// an index past 32767) has lineCol 0, which no packed place has since
// lines count from 1, and link indexes the document's wide places.
type place struct {
	lineCol, link uint32
}

// wide is a place unpacked.
type wide struct {
	line, col int32
	parent    Pos
	// ref is the array index when >= 0; else the member name is
	// memberNames[-ref-1], or the document's own names beyond them.
	ref int32
}

// The packed layout of a place.
const (
	colBits  = 12
	refBits  = 16
	refIndex = 1 << (refBits - 1) // a packed ref with this bit is an array index
)

// pack returns w packed, and false when it does not fit; self is the
// place's own Pos.
func (w wide) pack(self Pos) (place, bool) {
	back := uint32(self - w.parent)
	if w.line < 1 || w.col < 1 || w.line >= 1<<(32-colBits) || w.col >= 1<<colBits ||
		w.parent >= self || back >= 1<<(32-refBits) || w.ref >= refIndex || -w.ref > refIndex {
		return place{}, false
	}
	ref := uint32(-w.ref - 1) // a name
	if w.ref >= 0 {
		ref = refIndex | uint32(w.ref)
	}
	return place{lineCol: uint32(w.line)<<colBits | uint32(w.col), link: back<<refBits | ref}, true
}

// placeAt returns the place at p unpacked.
func (d Places) placeAt(p Pos) wide {
	pl := d.places[p]
	if pl.lineCol == 0 {
		return d.extra.wide[pl.link]
	}
	w := wide{line: int32(pl.lineCol >> colBits), col: int32(pl.lineCol & (1<<colBits - 1)), parent: p - Pos(pl.link>>refBits)}
	if ref := pl.link & (1<<refBits - 1); ref&refIndex != 0 {
		w.ref = int32(ref &^ refIndex)
	} else {
		w.ref = -int32(ref) - 1
	}
	return w
}

// Places resolve the Pos values of one document to where they were
// written. A document holds its own (Document.Place and the rest come from
// here); a value derived from it, such as the facts the cross-document
// rules read (checks/chain), keeps them to point into the document once
// the document itself is gone.
type Places struct {
	places []place // indexed by Pos; places[0] is unused
	extra  *extra  // nil unless a name or a place needs it
}

// extra is what few documents need beside their places, kept behind one
// pointer.
type extra struct {
	names []string // member names that are not memberNames (see wide.ref)
	wide  []wide   // places that do not pack
}

// memberNames are the member names the decoder reads, so that a place
// names one by a small index (see wide.ref).
var memberNames = []string{
	"action", "actor_id", "adapter", "algorithm", "as_built", "backend", "boundary", "canonicalization",
	"contract_version", "cors_allowed_headers", "declared", "echo_key_header", "enabled",
	"error_code", "example", "exclude_fields", "from", "header", "header_to_allow_inbound",
	"header_to_allow_outbound", "headers", "http_idempotency", "http_retry",
	"idempotency_conflict", "idempotency_fingerprint", "idempotency_inflight",
	"idempotency_replay", "idempotency_scope", "idempotency_storage", "inputs", "key_format", "kind",
	"lease_ms", "log_fields", "max_attempts", "max_bytes", "max_length", "max_records", "max_tenant_percent", "method", "methods",
	"mode", "name", "namespace", "observability", "on_completed", "on_failed", "on_missing", "on_payload_mismatch",
	"operation_key", "operations", "path", "pattern", "per_try_timeout_ms", "policy", "reason",
	"replayed_header", "request_id_header", "require_key", "requires_idempotency_key",
	"retry_on", "role", "rule", "same_body", "same_status", "scope_sources", "service",
	"sets_headers", "state_changing", "status", "tenant_id", "tier", "to", "ttl", "ttl_reduction",
	"wait_timeout_ms", SuppressionField,
}

var memberIndex = func() map[string]int32 {
	m := make(map[string]int32, len(memberNames))
	for i, n := range memberNames {
		m[n] = int32(i)
	}
	return m
}()

// name returns the member name a negative ref stands for.
func (d Places) name(ref int32) string {
	i := int(-ref - 1)
	if i < len(memberNames) {
		return memberNames[i]
	}
	return d.extra.names[i-len(memberNames)]
}

// Place is a resolved Pos.
type Place struct {
	Line    int // 1-based
	Column  int // 1-based, in Unicode code points
	Pointer string
}

// Place resolves p. The zero Pos resolves to the document itself, at 1:1.
func (d Places) Place(p Pos) Place {
	if p <= 0 || int(p) >= len(d.places) {
		return Place{Line: 1, Column: 1}
	}
	pl := d.placeAt(p)
	return Place{Line: int(pl.line), Column: int(pl.col), Pointer: d.Pointer(p)}
}

// Pointer returns the JSON Pointer of the value at p.
func (d Places) Pointer(p Pos) string {
	if p <= 1 || int(p) >= len(d.places) {
		return ""
	}
	var segs []string
	for q := p; q > 1; {
		pl := d.placeAt(q)
		q = pl.parent
		if ref := pl.ref; ref >= 0 {
			segs = append(segs, strconv.Itoa(int(ref)))
		} else {
			segs = append(segs, jsontree.EscapePointer(d.name(ref)))
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
func (d Places) Member(p Pos, name string) string {
	return d.Pointer(p) + "/" + jsontree.EscapePointer(name)
}

// Has reports whether the document holds a value at pointer, among the
// values the decoder placed (every member its kind's schema declares). It
// walks every place: for the rare question, not for every finding.
func (d Places) Has(pointer string) bool {
	for p := Pos(2); int(p) < len(d.places); p++ {
		if d.Pointer(p) == pointer {
			return true
		}
	}
	return false
}

// Cut returns the places of the values at pos, and of the objects and
// arrays holding them (their pointers go through them), numbered anew in
// order, and rewrites each *pos to its number there. A value derived from
// the document, such as the facts the cross-document rules read
// (checks/chain), keeps them instead of the places of every value it left
// behind. pos must hold every Pos the derived value holds, once, in memory
// of its own: rewriting a list it shares with the document would move the
// document's values. Has answers, after the cut, only for the values kept.
func (d Places) Cut(pos []*Pos) Places {
	var small [256]Pos // old Pos to new; most documents place fewer values
	renum := small[:0]
	if len(d.places) > len(small) {
		renum = make([]Pos, len(d.places))
	}
	renum = renum[:len(d.places)]
	kept := 0
	for _, p := range pos {
		for q := *p; q > 0 && int(q) < len(d.places) && renum[q] == 0; q = d.placeAt(q).parent {
			renum[q] = 1
			kept++
		}
	}
	out := Places{places: make([]place, 1, kept+1)}
	for p := Pos(1); int(p) < len(d.places); p++ {
		if renum[p] == 0 {
			continue
		}
		self := Pos(len(out.places))
		renum[p] = self
		w := d.placeAt(p)
		w.parent = renum[w.parent] // the parent comes first, and is kept
		pl, ok := w.pack(self)
		if !ok {
			if out.extra == nil {
				out.extra = &extra{}
			}
			pl = place{link: uint32(len(out.extra.wide))}
			out.extra.wide = append(out.extra.wide, w)
		}
		out.places = append(out.places, pl)
	}
	if d.extra != nil && len(d.extra.names) > 0 {
		if out.extra == nil {
			out.extra = &extra{}
		}
		out.extra.names = d.extra.names
	}
	for _, p := range pos {
		if *p > 0 && int(*p) < len(renum) {
			*p = renum[*p]
		}
	}
	return out
}
