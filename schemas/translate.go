package schemas

// This file turns the library's validation errors into one-line,
// user-facing violations (IDL002): what is wrong, where, and what was found.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/idemlint/idemlint/schemas/jsontree"
	"github.com/idemlint/idemlint/schemas/suggest"
)

// validate validates doc against sch and translates the errors.
func (s *schemaSet) validate(sch *jsonschema.Schema, doc any) []Violation {
	return finish(s.translate(sch, doc, nil))
}

// translate validates the value at prefix in doc (doc itself when prefix is
// empty) against sch and translates the errors, unsorted. Messages look
// values up in doc, so a member validated on its own reads as it would in
// its document.
func (s *schemaSet) translate(sch *jsonschema.Schema, doc any, prefix []string) []Violation {
	instance := doc
	if len(prefix) > 0 {
		instance = valueAt(doc, prefix)
	}
	return s.translateAt(sch, instance, func() (any, []string) { return doc, prefix })
}

// translateAt is translate for an instance whose document and place in it
// within returns: called only when there are errors, so the document a
// member is wrapped in for messages is built only for the few invalid
// members (most are valid, and the wrapping was much of their cost).
func (s *schemaSet) translateAt(sch *jsonschema.Schema, instance any, within func() (doc any, prefix []string)) []Violation {
	err := sch.Validate(instance)
	if err == nil {
		return nil
	}
	doc, prefix := within()
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		// Not produced by the library for a compiled schema; keep it one line
		// and free of library internals.
		return []Violation{{Pointer: pointer(prefix), Message: "document could not be validated"}}
	}
	t := translator{set: s, doc: doc, prefix: prefix}
	t.walk(verr)
	return t.out
}

type translator struct {
	set *schemaSet
	doc any
	// prefix is where the validated value sits in doc, when it is one
	// member of a document rather than the document (see ValidateTree).
	prefix []string
	out    []Violation
}

// at returns the location in t.doc of an instance location of an error.
func (t *translator) at(loc []string) []string {
	if len(t.prefix) == 0 {
		return loc
	}
	return append(slices.Clip(t.prefix), loc...)
}

func (t *translator) add(loc []string, msg string) {
	t.out = append(t.out, Violation{Pointer: pointer(loc), Message: msg})
}

// walk flattens the cause tree to its leaves, translating each leaf. An
// anyOf/oneOf failure is one leaf: its branches are not reported.
func (t *translator) walk(e *jsonschema.ValidationError) {
	loc := t.at(e.InstanceLocation)
	subj := subject(t.doc, loc)
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		for _, c := range e.Causes {
			t.walk(c)
		}
		if len(e.Causes) == 0 {
			t.add(loc, subj+" is invalid")
		}

	case *kind.Required:
		why := ""
		if f := t.set.because[e.SchemaURL]; f != nil {
			why = " (" + f(t.doc) + ")"
		}
		for _, name := range k.Missing {
			t.add(append(slices.Clip(loc), name), "missing required field "+strconv.Quote(name)+why)
		}

	case *kind.DependentRequired:
		for _, name := range k.Missing {
			t.add(append(slices.Clip(loc), name), "missing required field "+strconv.Quote(name)+
				" (required when "+strconv.Quote(k.Prop)+" is present)")
		}

	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			t.add(append(slices.Clip(loc), name), t.unknownField(e.SchemaURL, loc, name))
		}

	case *kind.FalseSchema:
		if n := len(loc); n > 0 && isObject(valueAt(t.doc, loc[:n-1])) {
			t.add(loc, "field "+strconv.Quote(loc[n-1])+" is not allowed here")
		} else {
			t.add(loc, subj+" is not allowed here")
		}

	case *kind.Type:
		t.add(loc, subj+" must be "+typePhrase(k.Want)+", found "+foundType(k, valueAt(t.doc, loc)))

	case *kind.Enum:
		t.add(loc, subj+" must be "+enumPhrase(k.Want)+", found "+display(k.Got)+caseHint(k.Got, k.Want))

	case *kind.Const:
		t.add(loc, subj+" must be "+display(k.Want)+", found "+display(k.Got))

	case *kind.Pattern:
		want := t.set.expect[e.SchemaURL]
		if want == "" {
			want = "a string matching " + k.Want
		}
		t.add(loc, subj+" must be "+want+", found "+display(k.Got))

	case *kind.AnyOf, *kind.OneOf:
		if o, ok := k.(*kind.OneOf); ok && len(o.Subschemas) > 1 {
			t.add(loc, subj+" is ambiguous: it matches more than one allowed form")
			break
		}
		want := t.set.expect[e.SchemaURL]
		if want == "" {
			want = "one of the allowed forms"
		}
		t.add(loc, subj+" must be "+want+", found "+display(valueAt(t.doc, loc)))

	case *kind.Minimum:
		t.add(loc, t.rangeMsg(e, subj, "at least "+ratString(k.Want)))
	case *kind.Maximum:
		t.add(loc, t.rangeMsg(e, subj, "at most "+ratString(k.Want)))
	case *kind.ExclusiveMinimum:
		t.add(loc, t.rangeMsg(e, subj, "greater than "+ratString(k.Want)))
	case *kind.ExclusiveMaximum:
		t.add(loc, t.rangeMsg(e, subj, "less than "+ratString(k.Want)))
	case *kind.MultipleOf:
		t.add(loc, t.rangeMsg(e, subj, "a multiple of "+ratString(k.Want)))

	case *kind.MinItems:
		if k.Want == 1 {
			t.add(loc, subj+" must not be empty")
		} else {
			t.add(loc, fmt.Sprintf("%s must have at least %d items, found %d", subj, k.Want, k.Got))
		}
	case *kind.MaxItems:
		t.add(loc, fmt.Sprintf("%s must have at most %d items, found %d", subj, k.Want, k.Got))
	case *kind.UniqueItems:
		t.add(loc, fmt.Sprintf("%s must not repeat items: items %d and %d are equal", subj, k.Duplicates[0], k.Duplicates[1]))
	case *kind.MinLength:
		if k.Want == 1 {
			t.add(loc, subj+" must not be empty")
		} else {
			t.add(loc, fmt.Sprintf("%s must be at least %d characters long, found %d", subj, k.Want, k.Got))
		}
	case *kind.MaxLength:
		t.add(loc, fmt.Sprintf("%s must be at most %d characters long, found %d", subj, k.Want, k.Got))
	case *kind.MinProperties:
		t.add(loc, fmt.Sprintf("%s must have at least %d fields, found %d", subj, k.Want, k.Got))
	case *kind.MaxProperties:
		t.add(loc, fmt.Sprintf("%s must have at most %d fields, found %d", subj, k.Want, k.Got))
	case *kind.Format:
		t.add(loc, subj+" must be a valid "+k.Want+", found "+display(k.Got))
	case *kind.InvalidJsonValue:
		t.add(loc, fmt.Sprintf("%s holds a value that is not JSON (Go type %T)", subj, k.Value))

	default:
		// Not, Contains, dependencies and other kinds our schemas do not use
		// in a reporting position: stay one line, no library text.
		t.add(loc, subj+" is invalid")
	}
}

// rangeMsg words a numeric bound failure, using the $def's phrase when known.
func (t *translator) rangeMsg(e *jsonschema.ValidationError, subj, bound string) string {
	found := display(valueAt(t.doc, t.at(e.InstanceLocation)))
	if want := t.set.expect[e.SchemaURL]; want != "" {
		return subj + " must be " + want + ", found " + found
	}
	return subj + " must be " + bound + ", found " + found
}

// maxListed is the largest number of allowed field names listed in an
// unknown-field message.
const maxListed = 8

// unknownField words an unknown field: a suggestion for a likely typo, the
// kinds it belongs to if it is a top-level field of another kind, or the list
// of allowed names when it is short.
func (t *translator) unknownField(schemaURL string, loc []string, name string) string {
	msg := "unknown field " + strconv.Quote(name)
	sch := t.set.byLoc[schemaURL]
	var allowed []string
	if sch != nil {
		for p := range sch.Properties {
			allowed = append(allowed, p)
		}
		sort.Strings(allowed)
	}
	if near := suggest.Near(name, allowed); len(near) > 0 {
		return msg + "; did you mean " + strconv.Quote(near[0]) + "?"
	}
	if parents := belongsUnder(sch, allowed, name); len(parents) > 0 {
		return msg + "; it belongs under " + strings.Join(parents, " or ")
	}
	if len(loc) == 0 {
		if owners := t.kindsWithTopLevel(name); len(owners) > 0 {
			return msg + "; it is only allowed on " + strings.Join(owners, ", ") + " documents"
		}
	}
	if len(allowed) > 0 && len(allowed) <= maxListed {
		return msg + "; allowed: " + strings.Join(allowed, ", ")
	}
	return msg + `; extension fields must start with "x-"`
}

// belongsUnder returns the quoted names of the object-valued properties of
// sch (sorted, as in allowed) that declare a field called name: a field
// written one level too high.
func belongsUnder(sch *jsonschema.Schema, allowed []string, name string) []string {
	var out []string
	for _, p := range allowed {
		child := sch.Properties[p]
		for i := 0; child != nil && child.Properties == nil && child.Ref != nil && i < 4; i++ {
			child = child.Ref
		}
		if child != nil && child.Properties[name] != nil {
			out = append(out, strconv.Quote(p))
		}
	}
	return out
}

func (t *translator) kindsWithTopLevel(name string) []string {
	var out []string
	for _, k := range kinds {
		if t.set.topLevel[k][name] {
			out = append(out, k)
		}
	}
	return out
}

// --- wording helpers ---

// pointer renders instance location tokens as an RFC 6901 JSON Pointer.
func pointer(loc []string) string {
	var sb strings.Builder
	for _, tok := range loc {
		sb.WriteByte('/')
		sb.WriteString(jsontree.EscapePointer(tok))
	}
	return sb.String()
}

// valueAt returns the value of doc at loc, or nil.
func valueAt(doc any, loc []string) any {
	v := doc
	for _, tok := range loc {
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// subject names the value at loc: `"status"`, `"retry_on"[2]`, or `document`.
func subject(doc any, loc []string) string {
	// Walk down to find which tokens index arrays.
	isIndex := make([]bool, len(loc))
	v := doc
	for i, tok := range loc {
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			isIndex[i] = true
			if n, err := strconv.Atoi(tok); err == nil && n >= 0 && n < len(c) {
				v = c[n]
			} else {
				v = nil
			}
		default:
			v = nil
		}
	}
	// The subject is the last field name followed by the indexes after it.
	j := len(loc) - 1
	for j >= 0 && isIndex[j] {
		j--
	}
	var sb strings.Builder
	if j < 0 {
		sb.WriteString("document")
	} else {
		sb.WriteString(strconv.Quote(loc[j]))
	}
	for _, tok := range loc[j+1:] {
		sb.WriteByte('[')
		sb.WriteString(tok)
		sb.WriteByte(']')
	}
	return sb.String()
}

// typePhrase renders the wanted JSON types with articles: "an integer",
// "a string or null".
func typePhrase(want []string) string {
	parts := make([]string, len(want))
	for i, w := range want {
		switch w {
		case "null":
			parts[i] = "null"
		case "integer", "object", "array":
			parts[i] = "an " + w
		default:
			parts[i] = "a " + w
		}
	}
	return strings.Join(parts, " or ")
}

// foundType words what a type mismatch found: the JSON type, or the value
// itself when a number is not an integer.
func foundType(k *kind.Type, v any) string {
	if k.Got == "number" && slices.Contains(k.Want, "integer") {
		return display(v)
	}
	return k.Got
}

// enumPhrase renders an enum's values: `"reject"` or `one of "a", "b", "c"`.
func enumPhrase(want []any) string {
	if len(want) == 1 {
		return display(want[0])
	}
	parts := make([]string, len(want))
	for i, w := range want {
		parts[i] = display(w)
	}
	return "one of " + strings.Join(parts, ", ")
}

// caseHint suggests the enum value that differs from got only by case.
func caseHint(got any, want []any) string {
	g, ok := got.(string)
	if !ok {
		return ""
	}
	for _, w := range want {
		if ws, ok := w.(string); ok && ws != g && strings.EqualFold(ws, g) {
			return " (did you mean " + strconv.Quote(ws) + "?)"
		}
	}
	return ""
}

// maxShown is the largest number of runes of a string value quoted in a
// message; longer values are cut.
const maxShown = 60

// display renders an instance value for a message: strings quoted (and cut
// when long), numbers and literals as JSON, containers by their type.
func display(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if utf8.RuneCountInString(v) > maxShown {
			r := []rune(v)
			return strconv.Quote(string(r[:maxShown])) + "..."
		}
		return strconv.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return v.String()
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(v)
	default:
		return fmt.Sprintf("a value of Go type %T", v)
	}
}

// ratString renders a bound: an integer as such, otherwise a short decimal.
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
