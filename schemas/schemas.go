// Package schemas holds the JSON Schemas (draft 2020-12) of boundary documents
// (docs/format.md) and validates decoded documents against
// them, translating schema errors into one-line, user-facing violations (IDL002).
//
// The schemas check shape and types only: required fields, types, enums,
// patterns and unknown fields. Semantic requirements (which role a kind may
// have, which statuses are acceptable, ...) are lint rules elsewhere.
//
// Schemas are embedded in the binary and compiled once per process, lazily.
// Compilation never touches the network or the file system.
//
// schemas and its sub-packages are the format core: fileset (finding and
// reading boundary files), jsontree (strict JSON with positions), boundary
// (the typed model) and the schemas themselves. Everything else of ours
// (the rules, the reference engine, conform, the fixtures) imports the
// core; the core imports nothing of ours above it.
package schemas

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed *.schema.json
var files embed.FS

// baseURL is the prefix of every schema $id: baseURL + name + ".schema.json".
const baseURL = "https://github.com/idemlint/idemlint/schemas/v1/"

const (
	commonName   = "common"
	envelopeName = "envelope"
)

// kinds are the boundary kinds that have a schema, sorted.
var kinds = []string{"adapter", "bff_to_gateway", "browser_to_bff", "gateway_to_adapter"}

// Kinds returns the names of the boundary kinds that have a schema, sorted.
func Kinds() []string {
	return slices.Clone(kinds)
}

// Source returns the raw bytes of a schema by name: a kind, "common" or
// "envelope" (and any other embedded <name>.schema.json, such as "config");
// ok=false if unknown. The returned slice is a copy.
func Source(name string) (src []byte, ok bool) {
	if name == "" || strings.ContainsAny(name, "/\\.") {
		return nil, false
	}
	b, err := files.ReadFile(name + ".schema.json")
	if err != nil {
		return nil, false
	}
	return b, true
}

// schemaURL returns the $id of the schema with the given name.
func schemaURL(name string) string {
	return baseURL + name + ".schema.json"
}

// Violation is one schema error.
type Violation struct {
	// Pointer is the RFC 6901 JSON Pointer of the offending value; for a
	// missing required field, the pointer where the field belongs (parent
	// pointer + "/" + escaped name); for an unknown field, the pointer of that
	// field.
	Pointer string
	// Message is one line naming the field and what was expected.
	Message string
}

// Validate validates a decoded document against the schema of its "boundary"
// kind (the envelope schema if that is missing/unknown). doc uses
// map[string]any, []any, string, bool, nil and json.Number. The result is
// sorted by Pointer then Message and deduplicated; it is nil when the document
// is valid. Validate is safe for concurrent use; the first call compiles the
// embedded schemas (and panics if they do not compile, a build defect the
// package tests catch).
func Validate(doc any) []Violation {
	s := load()
	sch := s.envelope
	if obj, ok := doc.(map[string]any); ok {
		if b, ok := obj["boundary"].(string); ok {
			if k, ok := s.kinds[b]; ok {
				sch = k
			}
		}
	}
	return s.validate(sch, doc)
}

// finish sorts by Pointer then Message and removes duplicates.
func finish(vs []Violation) []Violation {
	sort.Slice(vs, func(i, j int) bool {
		if vs[i].Pointer != vs[j].Pointer {
			return vs[i].Pointer < vs[j].Pointer
		}
		return vs[i].Message < vs[j].Message
	})
	return slices.Compact(vs)
}

// --- compilation ---

// schemaSet is the compiled schema set; immutable after load, safe for concurrent use.
type schemaSet struct {
	kinds    map[string]*jsonschema.Schema
	envelope *jsonschema.Schema

	// byLoc indexes every compiled (sub)schema by its Location, which is what
	// ValidationError.SchemaURL holds.
	byLoc map[string]*jsonschema.Schema
	// expect maps the Location of a common $def to a phrase describing the
	// values it accepts, used for pattern, range and anyOf failures.
	expect map[string]string
	// because maps the Location of a "then" schema to a function explaining
	// why its requirement applies to a given document.
	because map[string]func(doc any) string
	// topLevel maps a kind to its allowed top-level field names.
	topLevel map[string]map[string]bool
	// sections are each kind's schemas split by top-level property, for
	// ValidateTree.
	sections map[string]*sectionSchemas
	// operation is the schema of one item of operations, which every kind
	// shares, and operationItem its shell and property schemas.
	operation     *jsonschema.Schema
	operationItem *sectionSchemas
}

var (
	loadOnce sync.Once
	loaded   *schemaSet
	loadErr  error
)

func load() *schemaSet {
	loadOnce.Do(func() { loaded, loadErr = compile() })
	if loadErr != nil {
		// The schemas are embedded and covered by tests: failing to compile
		// them is a build defect, not a user error.
		panic("schemas: compiling embedded schemas: " + loadErr.Error())
	}
	return loaded
}

// expectations are phrases for $defs of common.schema.json whose failures
// deserve a better message than the raw keyword (patterns, ranges, anyOf).
var expectations = map[string]string{
	"componentId":          `a component id (1-63 characters a-z, 0-9, ".", "_", "-", starting with a letter or a digit)`,
	"operationKey":         `an operation key (a-z, 0-9, ".", "_", ":", "-", starting with a letter or a digit)`,
	"path":                 `a path starting with "/"`,
	"status":               `an HTTP status code (integer 100-599)`,
	"duration":             `a duration: an integer followed by s, m, h, d or w (e.g. "24h", "14d")`,
	"headerRef":            `"header:<name>"`,
	"jsonPointer":          `a non-empty JSON Pointer (starting with "/", "~" only as "~0" or "~1")`,
	"headerName":           "an HTTP header name (an RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~)",
	"milliseconds":         `milliseconds from 0 to 86400000`,
	"positiveMilliseconds": `milliseconds from 1 to 86400000`,
	"retryOnItem":          `one of connect_error, timeout, or a status code 100-599`,
	"fingerprintInput":     `one of method, path, query, body, or "header:<name>"`,
	"canonicalization":     `"canonical_json", "raw_bytes", or an object from media type to "canonical_json", "canonical_form" or "raw_bytes"`,
	"mediaTypeName":        `a media type "type/subtype" in lower case without parameters, or "*/*"`,
}

// embeddedDocs decodes every embedded schema, keyed by file name.
func embeddedDocs() (map[string]any, error) {
	entries, err := fs.Glob(files, "*.schema.json")
	if err != nil {
		return nil, err
	}
	docs := make(map[string]any, len(entries))
	for _, name := range entries {
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		docs[name] = doc
	}
	return docs, nil
}

// embeddedLoader serves the embedded schemas by URL and refuses every other
// URL: no network, no file system.
type embeddedLoader map[string]any

func (l embeddedLoader) Load(url string) (any, error) {
	if doc, ok := l[url]; ok {
		return doc, nil
	}
	return nil, fmt.Errorf("schemas: refusing to load %q: only the embedded schemas are available", url)
}

// newCompiler returns a compiler holding every embedded schema as a resource,
// with a loader that refuses anything else.
func newCompiler() (*jsonschema.Compiler, error) {
	docs, err := embeddedDocs()
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	loader := embeddedLoader{}
	for file, doc := range docs {
		url := baseURL + file
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		loader[url] = doc
	}
	c.UseLoader(loader)
	return c, nil
}

func compile() (*schemaSet, error) {
	c, err := newCompiler()
	if err != nil {
		return nil, err
	}
	s := &schemaSet{
		kinds:    map[string]*jsonschema.Schema{},
		byLoc:    map[string]*jsonschema.Schema{},
		expect:   map[string]string{},
		because:  map[string]func(any) string{},
		topLevel: map[string]map[string]bool{},
	}
	for _, k := range kinds {
		sch, err := c.Compile(schemaURL(k))
		if err != nil {
			return nil, err
		}
		s.kinds[k] = sch
		s.index(sch)
		names := map[string]bool{}
		for p := range sch.Properties {
			names[p] = true
		}
		s.topLevel[k] = names
	}
	if s.envelope, err = c.Compile(schemaURL(envelopeName)); err != nil {
		return nil, err
	}
	s.index(s.envelope)
	for def, phrase := range expectations {
		sch, err := c.Compile(schemaURL(commonName) + "#/$defs/" + def)
		if err != nil {
			return nil, err
		}
		s.expect[sch.Location] = phrase
	}
	cond, err := c.Compile(schemaURL(commonName) + "#/$defs/httpIdempotencyWhenStateChanging")
	if err != nil {
		return nil, err
	}
	// if (http_idempotency absent) then (if (a state-changing operation) then
	// (require http_idempotency)): the inner "then" reports the requirement.
	if cond.Then == nil || cond.Then.Then == nil {
		return nil, fmt.Errorf("httpIdempotencyWhenStateChanging: missing then/then")
	}
	s.because[cond.Then.Then.Location] = stateChangingReason
	if err := compileSections(c, s); err != nil {
		return nil, err
	}
	return s, nil
}

// index records sch and every subschema reachable from it in s.byLoc.
func (s *schemaSet) index(sch *jsonschema.Schema) {
	if sch == nil {
		return
	}
	if _, seen := s.byLoc[sch.Location]; seen {
		return
	}
	s.byLoc[sch.Location] = sch
	s.index(sch.Ref)
	for _, p := range sch.Properties {
		s.index(p)
	}
	for _, p := range sch.PatternProperties {
		s.index(p)
	}
	if ap, ok := sch.AdditionalProperties.(*jsonschema.Schema); ok {
		s.index(ap)
	}
	if it, ok := sch.Items.(*jsonschema.Schema); ok {
		s.index(it)
	}
	s.index(sch.Items2020)
	for _, p := range sch.PrefixItems {
		s.index(p)
	}
	s.index(sch.Contains)
	s.index(sch.Not)
	s.index(sch.If)
	s.index(sch.Then)
	s.index(sch.Else)
	s.index(sch.PropertyNames)
	for _, list := range [][]*jsonschema.Schema{sch.AllOf, sch.AnyOf, sch.OneOf} {
		for _, p := range list {
			s.index(p)
		}
	}
	for _, p := range sch.DependentSchemas {
		s.index(p)
	}
}

// stateChangingReason explains why http_idempotency is required on doc.
func stateChangingReason(doc any) string {
	obj, _ := doc.(map[string]any)
	ops, _ := obj["operations"].([]any)
	for i, op := range ops {
		o, ok := op.(map[string]any)
		if !ok || !isStateChanging(o) {
			continue
		}
		if key, ok := o["operation_key"].(string); ok && key != "" {
			return "operation " + strconv.Quote(key) + " is state-changing"
		}
		return "operation /operations/" + strconv.Itoa(i) + " is state-changing"
	}
	return "required when an operation is state-changing"
}

// isStateChanging mirrors the schema's definition: state_changing is true, or
// the method is POST/PUT/PATCH/DELETE and state_changing is not false.
func isStateChanging(op map[string]any) bool {
	sc, has := op["state_changing"]
	if has && sc == true {
		return true
	}
	switch op["method"] {
	case "POST", "PUT", "PATCH", "DELETE":
		return !has || sc != false
	}
	return false
}
