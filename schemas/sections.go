package schemas

import (
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/idemlint/idemlint/schemas/jsontree"
)

// Validating a document is most of the cost of checking it, and real
// boundary sets repeat whole sections verbatim from file to file (the same
// http_idempotency, the same allowlists, the same retry policy). A kind's
// schema splits cleanly along its top-level properties: each property's
// schema sees only that property's value, and the rest (type, required,
// additionalProperties, the conditional http_idempotency requirement)
// sees only which members exist and the operations. So ValidateTree
// validates a "shell" of the kind schema, whose properties are all true,
// against the document's member names and operations, and each member
// against its property's schema, and a Validator remembers the violations
// of a member by its kind, name and exact source text. The result equals
// Validate's; a test holds the two to that on every fixture and on
// thousands of mutations.

// sectionSchemas are one kind's shell and property schemas.
type sectionSchemas struct {
	shell *jsonschema.Schema
	props map[string]*jsonschema.Schema
}

// sectionKey identifies a member's violations: its text decides its value.
type sectionKey struct {
	kind, name, raw string
}

// Bounds of a Validator's cache: sections larger than maxCachedRaw bytes
// are rarely repeated, and past maxCachedSections entries the cache stops
// growing.
const (
	maxCachedRaw      = 8 << 10
	maxCachedSections = 1 << 18
)

// A Validator validates the documents of one boundary set, validating each
// distinct section once. It is safe for concurrent use; make one per set,
// so the cache goes when the set is done.
//
// A section is remembered by a 128-bit digest of its key, not its text:
// most sections are valid and most are seen once, so the cache holds
// little more than digests (about 40 bytes a section, where keeping the
// text and a sync.Map entry cost several hundred). Two seeded 64-bit
// hashes make a collision, which could hide a violation, practically
// impossible (about 2^-64 for a million sections).
type Validator struct {
	seeds  [2]maphash.Seed
	shards [16]struct {
		sync.Mutex
		found map[digest][]Violation // nil for a valid section
	}
	count atomic.Int64
}

// digest identifies a section key; see Validator.
type digest [2]uint64

// NewValidator returns a Validator with an empty cache.
func NewValidator() *Validator {
	v := &Validator{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	for i := range v.shards {
		v.shards[i].found = map[digest][]Violation{}
	}
	return v
}

func (val *Validator) digest(key sectionKey) digest {
	var d digest
	for i, seed := range val.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		h.WriteString(key.kind)
		h.WriteByte(0)
		h.WriteString(key.name)
		h.WriteByte(0)
		h.WriteString(key.raw)
		d[i] = h.Sum64()
	}
	return d
}

// compileSections compiles each kind's shell and property schemas. The
// shell is the kind's schema document with every property schema replaced
// by true, under an $id beside the original so its relative references
// resolve alike. Unknown-field hints look schemas up by location, so the
// shell's location maps to the real kind schema.
func compileSections(c *jsonschema.Compiler, s *schemaSet) error {
	s.sections = map[string]*sectionSchemas{}
	for _, k := range kinds {
		src, _ := Source(k)
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(src)))
		if err != nil {
			return err
		}
		root := doc.(map[string]any)
		shellURL := baseURL + k + ".shell.schema.json"
		root["$id"] = shellURL
		props, _ := root["properties"].(map[string]any)
		for name := range props {
			props[name] = true
		}
		if err := c.AddResource(shellURL, root); err != nil {
			return err
		}
		shell, err := c.Compile(shellURL)
		if err != nil {
			return err
		}
		s.byLoc[shell.Location] = s.kinds[k]
		sec := &sectionSchemas{shell: shell, props: map[string]*jsonschema.Schema{}}
		for name := range s.kinds[k].Properties {
			prop, err := c.Compile(schemaURL(k) + "#/properties/" + jsontree.EscapePointer(name))
			if err != nil {
				return err
			}
			sec.props[name] = prop
		}
		s.sections[k] = sec
	}
	return compileOperationSections(c, s)
}

// compileOperationSections compiles an item of operations the same way: a
// shell (the operation $def with every property true, in a copy of the
// common schema document) and each property's schema.
func compileOperationSections(c *jsonschema.Compiler, s *schemaSet) error {
	var err error
	if s.operation, err = c.Compile(schemaURL("common") + "#/$defs/operation"); err != nil {
		return err
	}
	src, _ := Source("common")
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(src)))
	if err != nil {
		return err
	}
	root := doc.(map[string]any)
	shellURL := baseURL + "common.shell.schema.json"
	root["$id"] = shellURL
	op := root["$defs"].(map[string]any)["operation"].(map[string]any)
	props := op["properties"].(map[string]any)
	for name := range props {
		props[name] = true
	}
	if err := c.AddResource(shellURL, root); err != nil {
		return err
	}
	shell, err := c.Compile(shellURL + "#/$defs/operation")
	if err != nil {
		return err
	}
	s.byLoc[shell.Location] = s.operation
	s.operationItem = &sectionSchemas{shell: shell, props: map[string]*jsonschema.Schema{}}
	for name := range s.operation.Properties {
		prop, err := c.Compile(schemaURL("common") + "#/$defs/operation/properties/" + jsontree.EscapePointer(name))
		if err != nil {
			return err
		}
		s.operationItem.props[name] = prop
	}
	return nil
}

// Validate is schemas.Validate for a parsed document, given its source
// text: it converts and validates only the sections it has not seen before.
// Two parts are finer than a member: the shell, which with http_idempotency
// present depends on the member names alone (the operations matter only to
// the condition that requires http_idempotency), and each item of
// operations, which repeat across documents far more often than whole
// operations lists do.
func (val *Validator) Validate(root *jsontree.Node, src string) []Violation {
	s := load()
	kind := root.Get("boundary")
	var sec *sectionSchemas
	if kind != nil && kind.Kind == jsontree.String {
		sec = s.sections[kind.Text]
	}
	if sec == nil {
		return Validate(root.Any()) // the envelope: a rare, broken document
	}
	out := val.shell(s, sec, kind.Text, root)
	for i, m := range root.Members {
		prop := sec.props[m.Key]
		if prop == nil {
			continue // an extension or an unknown field: the shell judged it
		}
		raw := rawValue(src, root, i)
		if m.Key == "operations" && m.Value.Kind == jsontree.Array && len(m.Value.Items) > 0 {
			out = val.operations(s, m.Value, raw, src, out)
			continue
		}
		key := sectionKey{kind.Text, m.Key, raw}
		out = append(out, val.cached(key, func() []Violation {
			v := m.Value.Any()
			return s.translateAt(prop, v, func() (any, []string) { return map[string]any{m.Key: v}, []string{m.Key} })
		})...)
	}
	return finish(out)
}

// EachViolation calls report with the pointer and message of each
// violation Validate finds, in its order: the schema stage the checks
// run for IDL002 (checks.SchemaStage), which names no type of this
// package so that the checks need not import it.
func (val *Validator) EachViolation(root *jsontree.Node, src string, report func(pointer, message string)) {
	for _, v := range val.Validate(root, src) {
		report(v.Pointer, v.Message)
	}
}

// cached returns the violations of key, validating with validate once.
func (val *Validator) cached(key sectionKey, validate func() []Violation) []Violation {
	if len(key.raw) > maxCachedRaw {
		return validate()
	}
	d := val.digest(key)
	shard := &val.shards[d[0]%uint64(len(val.shards))]
	shard.Lock()
	found, ok := shard.found[d]
	shard.Unlock()
	if ok {
		return found
	}
	found = validate()
	if val.count.Load() < maxCachedSections {
		shard.Lock()
		if _, ok := shard.found[d]; !ok {
			shard.found[d] = found
			val.count.Add(1)
		}
		shard.Unlock()
	}
	return found
}

// shell validates the document's members against its kind's shell.
func (val *Validator) shell(s *schemaSet, sec *sectionSchemas, kind string, root *jsontree.Node) []Violation {
	validate := func() []Violation {
		members := make(map[string]any, len(root.Members))
		for _, m := range root.Members {
			members[m.Key] = nil // the shell does not look at values but the operations
		}
		if root.Get("http_idempotency") == nil {
			if ops := root.Get("operations"); ops != nil {
				members["operations"] = ops.Any()
			}
		}
		return s.translate(sec.shell, members, nil)
	}
	if root.Get("http_idempotency") == nil {
		return validate()
	}
	names := make([]string, 0, len(root.Members))
	for _, m := range root.Members {
		names = append(names, m.Key)
	}
	slices.Sort(names)
	return val.cached(sectionKey{kind, "\x00shell", strings.Join(names, "\x00")}, validate)
}

// operations validates each item of a non-empty operations array, whose
// source text is raw, as the item at index 0 (so a cached answer serves any
// index), then moves the answer to the item's index. An object item is
// split like a document: its shell (its member names) and each member, so
// that an item whose operation_key and path name its flow still finds its
// method, example and shape in the cache.
func (val *Validator) operations(s *schemaSet, list *jsontree.Node, raw, src string, out []Violation) []Violation {
	end := list.Offset + len(raw) - 1 // the closing bracket
	for i, it := range list.Items {
		next := end
		if i+1 < len(list.Items) {
			next = list.Items[i+1].Offset
		}
		text := trimSeparator(src[it.Offset:next])
		var found []Violation
		if it.Kind == jsontree.Object {
			found = val.operationItem(s, it, text)
		} else {
			found = val.cached(sectionKey{"", "operations[]", text}, func() []Violation {
				v := it.Any()
				return s.translateAt(s.operation, v, func() (any, []string) {
					return map[string]any{"operations": []any{v}}, []string{"operations", "0"}
				})
			})
		}
		if i == 0 {
			out = append(out, found...)
			continue
		}
		index := strconv.Itoa(i)
		for _, v := range found {
			v.Pointer = "/operations/" + index + strings.TrimPrefix(v.Pointer, "/operations/0")
			if rest, ok := strings.CutPrefix(v.Message, `"operations"[0]`); ok {
				v.Message = `"operations"[` + index + "]" + rest
			}
			out = append(out, v)
		}
	}
	return out
}

// operationItem validates an object item of operations, whose source text
// is text, at index 0: its shell, then each member it defines.
func (val *Validator) operationItem(s *schemaSet, item *jsontree.Node, text string) []Violation {
	sec := s.operationItem
	names := make([]string, len(item.Members))
	for i, m := range item.Members {
		names[i] = m.Key
	}
	slices.Sort(names)
	out := val.cached(sectionKey{"", "operations[]\x00shell", strings.Join(names, "\x00")}, func() []Violation {
		members := make(map[string]any, len(item.Members))
		for _, m := range item.Members {
			members[m.Key] = nil
		}
		return s.translate(sec.shell, map[string]any{"operations": []any{members}}, []string{"operations", "0"})
	})
	end := item.Offset + len(text) // just past the closing brace
	for i, m := range item.Members {
		prop := sec.props[m.Key]
		if prop == nil {
			continue // an extension or an unknown field: the shell judged it
		}
		raw := memberText(text, item, i, end)
		out = append(out, val.cached(sectionKey{"", "operations[]." + m.Key, raw}, func() []Violation {
			v := m.Value.Any()
			return s.translateAt(prop, v, func() (any, []string) {
				return map[string]any{"operations": []any{map[string]any{m.Key: v}}}, []string{"operations", "0", m.Key}
			})
		})...)
	}
	return out
}

// memberText returns the source text of the value of obj's i-th member,
// where text is obj's source and end the offset just past obj: up to the
// next member's key in the source, or to obj's closing brace.
func memberText(text string, obj *jsontree.Node, i, end int) string {
	start := obj.Members[i].Value.Offset
	stop := end - 1 // the closing brace
	for _, m := range obj.Members {
		if m.KeyOffset > start && m.KeyOffset < stop {
			stop = m.KeyOffset
		}
	}
	return trimSeparator(text[start-obj.Offset : stop-obj.Offset])
}

// trimSeparator drops what may follow a value in its container: white
// space and one comma.
func trimSeparator(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	return strings.TrimRight(strings.TrimSuffix(s, ","), " \t\r\n")
}

// rawValue returns the source text of the value of root's i-th member: from
// its first byte to the next member's key in the source (members of a
// document with a duplicate key are not in source order), or to the end of
// the root object, less the separators in between.
func rawValue(src string, root *jsontree.Node, i int) string {
	start := root.Members[i].Value.Offset
	end := len(src)
	for _, m := range root.Members {
		if m.KeyOffset > start && m.KeyOffset < end {
			end = m.KeyOffset
		}
	}
	raw := strings.TrimRight(src[start:end], " \t\r\n")
	if end == len(src) {
		raw = strings.TrimSuffix(raw, "}")
	} else {
		raw = strings.TrimSuffix(raw, ",")
	}
	return strings.TrimRight(raw, " \t\r\n")
}
