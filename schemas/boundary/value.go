package boundary

import (
	"encoding/binary"
	"slices"
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

// A cut table (Places.Cut) is read only when a finding names one of its
// values, so it is kept smaller still: its places are varints (Places.enc),
// the number of places first, then each place in 4-5 bytes instead of 8:
// the line as the distance from the previous place's, the column, the
// distance back to the parent and the ref.

// count is the number of places d holds, the unused Pos 0 included.
func (d Places) count() int {
	if d.enc != nil {
		n, _ := binary.Uvarint(d.enc)
		return int(n)
	}
	return len(d.places)
}

// table is d's places as read by Place, Pointer and Has: a cut table is
// unpacked once, into buf when it fits.
type table struct {
	d    Places
	wide []wide // a cut table's places unpacked; nil for a plain table
}

func (d Places) table(buf []wide) table {
	if d.enc == nil {
		return table{d: d}
	}
	count, k := binary.Uvarint(d.enc)
	n := int(count)
	out := slices.Grow(buf[:0], n)[:1]
	enc := d.enc[k:]
	var prevLine int64
	for i := 1; i < n; i++ {
		line, k := binary.Varint(enc)
		col, l := binary.Uvarint(enc[k:])
		back, m := binary.Uvarint(enc[k+l:])
		ref, r := binary.Varint(enc[k+l+m:])
		enc = enc[k+l+m+r:]
		prevLine += line
		out = append(out, wide{line: int32(prevLine), col: int32(col), parent: Pos(i) - Pos(back), ref: int32(ref)})
	}
	return table{d: d, wide: out}
}

func (t table) at(p Pos) wide {
	if t.wide != nil {
		return t.wide[p]
	}
	return t.d.placeAt(p)
}

// Places resolve the Pos values of one document to where they were
// written. A document holds its own (Document.Place and the rest come from
// here); a value derived from it, such as the facts the cross-document
// rules read (checks/chain), keeps them to point into the document once
// the document itself is gone.
type Places struct {
	places []place // indexed by Pos; places[0] is unused
	enc    []byte  // a cut table's places as varints (see count), else nil
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
	if p <= 0 || int(p) >= d.count() {
		return Place{Line: 1, Column: 1}
	}
	var buf [128]wide
	t := d.table(buf[:0])
	pl := t.at(p)
	return Place{Line: int(pl.line), Column: int(pl.col), Pointer: t.pointer(p)}
}

// Pointer returns the JSON Pointer of the value at p.
func (d Places) Pointer(p Pos) string {
	var buf [128]wide
	return d.table(buf[:0]).pointer(p)
}

func (t table) pointer(p Pos) string {
	if p <= 1 || int(p) >= t.d.count() {
		return ""
	}
	var segs []string
	for q := p; q > 1; {
		pl := t.at(q)
		q = pl.parent
		if ref := pl.ref; ref >= 0 {
			segs = append(segs, strconv.Itoa(int(ref)))
		} else {
			segs = append(segs, jsontree.EscapePointer(t.d.name(ref)))
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
	var buf [128]wide
	t := d.table(buf[:0])
	for p := Pos(2); int(p) < d.count(); p++ {
		if t.pointer(p) == pointer {
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
// d is a document's own table: a cut table is not cut again.
func (d Places) Cut(pos []*Pos) Places {
	var small [256]Pos // old Pos to new; most documents place fewer values
	renum := small[:0]
	if len(d.places) > len(small) {
		renum = make([]Pos, len(d.places))
	}
	renum = renum[:len(d.places)]
	for _, p := range pos {
		for q := *p; q > 0 && int(q) < len(d.places) && renum[q] == 0; q = d.placeAt(q).parent {
			renum[q] = 1
		}
	}
	// Number the places kept in order: a parent comes before its values.
	self := Pos(0)
	for p := Pos(1); int(p) < len(d.places); p++ {
		if renum[p] != 0 {
			self++
			renum[p] = self
		}
	}
	var out Places
	if self < maxEncoded {
		out = d.encode(renum)
	} else {
		out = d.pack(renum, int(self))
	}
	// A member name beyond memberNames is most often one the facts leave
	// behind, such as a team's "x-owner": keep the names only when a
	// place kept needs one.
	if d.extra != nil && len(d.extra.names) > 0 && d.namesBeyond(renum) {
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

// namesBeyond reports whether a place that renum keeps is named by a
// member name beyond memberNames. The root's name (Pos 1, "") is never
// read: a pointer ends there.
func (d Places) namesBeyond(renum []Pos) bool {
	for p := Pos(2); int(p) < len(d.places); p++ {
		if renum[p] != 0 && d.placeAt(p).ref < -int32(len(memberNames)) {
			return true
		}
	}
	return false
}

// maxEncoded bounds the places of a cut table that are encoded: Place
// unpacks the whole of one, so a larger one (a document of thousands of
// operations) keeps its places packed, each read in one step.
const maxEncoded = 256

// encode returns the places of d that renum numbers (in order, from 1)
// as a cut table (see table).
func (d Places) encode(renum []Pos) Places {
	var buf [512]byte
	enc := buf[:0]
	var prevLine int64
	n := 0
	for p := Pos(1); int(p) < len(d.places); p++ {
		self := renum[p]
		if self == 0 {
			continue
		}
		n++
		w := d.placeAt(p)
		enc = binary.AppendVarint(enc, int64(w.line)-prevLine)
		enc = binary.AppendUvarint(enc, uint64(w.col))
		enc = binary.AppendUvarint(enc, uint64(self-renum[w.parent]))
		enc = binary.AppendVarint(enc, int64(w.ref))
		prevLine = int64(w.line)
	}
	var head [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(head[:], uint64(n+1))
	whole := make([]byte, h+len(enc))
	copy(whole, head[:h])
	copy(whole[h:], enc)
	return Places{enc: whole}
}

// pack returns the n places of d that renum numbers as a plain table.
func (d Places) pack(renum []Pos, n int) Places {
	out := Places{places: make([]place, 1, n+1)}
	for p := Pos(1); int(p) < len(d.places); p++ {
		self := renum[p]
		if self == 0 {
			continue
		}
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
	return out
}
