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
// pointer is built only for the few values a finding names. Sixteen bytes:
// a set keeps one per decoded value of every document.
type place struct {
	line, col int32
	parent    Pos
	// ref is the array index when >= 0; else the member name is
	// memberNames[-ref-1], or the document's own names beyond them.
	ref int32
}

// memberNames are the member names the decoder reads, so that a place
// names one by a small index (see place.ref).
var memberNames = []string{
	"action", "actor_id", "adapter", "algorithm", "backend", "boundary", "canonicalization",
	"contract_version", "cors_allowed_headers", "declared", "echo_key_header", "enabled",
	"error_code", "example", "exclude_fields", "from", "header", "header_to_allow_inbound",
	"header_to_allow_outbound", "headers", "http_idempotency", "http_retry",
	"idempotency_conflict", "idempotency_fingerprint", "idempotency_inflight",
	"idempotency_replay", "idempotency_scope", "idempotency_storage", "inputs", "key_format",
	"lease_ms", "log_fields", "max_attempts", "max_length", "max_records", "method", "methods",
	"mode", "observability", "on_completed", "on_failed", "on_missing", "on_payload_mismatch",
	"operation_key", "operations", "path", "pattern", "per_try_timeout_ms", "policy", "reason",
	"replayed_header", "request_id_header", "require_key", "requires_idempotency_key",
	"retry_on", "role", "rule", "same_body", "same_status", "scope_sources", "service",
	"state_changing", "status", "tenant_id", "tier", "to", "ttl", "ttl_reduction",
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
func (d *Document) name(ref int32) string {
	i := int(-ref - 1)
	if i < len(memberNames) {
		return memberNames[i]
	}
	return d.names[i-len(memberNames)]
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
		if ref := d.places[q].ref; ref >= 0 {
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
func (d *Document) Member(p Pos, name string) string {
	return d.Pointer(p) + "/" + jsontree.EscapePointer(name)
}
