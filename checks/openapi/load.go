// Package openapi reads an OpenAPI 3.x or Swagger 2.0 description of the
// API a browser calls: its operations with their header parameters,
// responses, request media types and positions in the file, and the full
// paths a browser sends them to. The rules that hold a boundary set to it
// (IDL301-IDL304, one file each, listed in Rules) live here too as rules
// of package checks; they read the description a command supplies to a
// run as the input Description. "init --from-openapi" builds a starter set from it
// (Starter).
//
// The reader visits only what idemlint reads (paths, parameters, the keys
// of responses, request bodies' media types, examples and top-level
// properties), on the parsed tree of the file, so the schemas of a
// description cost their parsing and nothing else, and a $ref that does
// not resolve costs what it is in and no more. Swagger 2.0 is read as it
// is written (its few differences: basePath, body and formData
// parameters, consumes), so findings point into the file itself. Nothing
// is ever fetched from the network: a $ref to a URL is refused, and a
// $ref to another file must stay inside the directory of the description.
package openapi

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/idemlint/idemlint/schemas/fileset"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// MaxFileSize bounds each file of an API description, as boundary
// documents are bounded. The parsed tree costs about 10 times the file's
// size in memory, so the limit also bounds memory; API descriptions of one
// product are far smaller.
const MaxFileSize = 8 << 20

// API is a loaded OpenAPI description.
type API struct {
	Path    string // the file as named
	Version string // the "openapi" field, e.g. "3.1.0", or "2.0" (Swagger)
	// InfoVersion is info.version, the version of the API itself.
	InfoVersion string
	Operations  []*Operation // sorted by path template, then method
	// Notes say what the reader left out: operations a $ref they need
	// does not resolve for, $refs it ignored, a key carried in the body.
	Notes []Note
	// BodyKey is the request body property that carries the idempotency
	// key ("idempotency_key") when the description carries it there: no
	// header parameter of a state-changing operation speaks of
	// idempotency, and the body of one has a property that does.
	BodyKey string

	routes map[string][]*Operation // by Route, see Find
	abs    string                  // Path made absolute, for Is
}

// Is reports whether path names the description's file.
func (api *API) Is(path string) bool {
	abs, err := filepath.Abs(path)
	return err == nil && abs == api.abs
}

// Operation is one operation of the description.
type Operation struct {
	Method   string // upper case
	Template string // the key under "paths", e.g. "/orders/{orderId}"
	// BasePaths are the path prefixes of the operation's servers (its own,
	// its path item's, else the document's), "" for the root; never empty.
	BasePaths []string
	ID        string // operationId
	Tags      []string
	At        Location // the method's key, e.g. "post:"
	Pointer   string   // JSON Pointer of the operation in the description
	// HeaderParams are its header parameters, path item ones included
	// unless the operation redefines them, $refs resolved.
	HeaderParams []Param
	// Responses are the keys of "responses": "201", "4XX", "default".
	Responses   []string
	ResponsesAt Location // the "responses" key, else At
	// RequestExample is the example of its JSON request body as compact
	// JSON (the media type's example, else its first example by name),
	// nil when it declares none.
	RequestExample json.RawMessage
	// RequestMediaTypes are the media types of its request body, in lower case
	// without parameters, sorted: "application/x-www-form-urlencoded".
	RequestMediaTypes []string

	bodyKey string // a body property that carries an idempotency key
}

// Param is a header parameter.
type Param struct {
	Name        string
	Required    bool
	Description string
	// At and Pointer are where it is defined: in the operation, or the
	// shared definition a $ref names.
	At      Location
	Pointer string
}

// Location is a position in the description; File is the file that holds
// it when the description spans several files.
type Location struct {
	File         string
	Line, Column int // 1-based; column in Unicode code points
}

// StateChanging reports whether the operation's method changes state
// (POST, PUT, PATCH, DELETE).
func (o *Operation) StateChanging() bool {
	switch o.Method {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}

// Name is how findings name the operation: "POST /orders/{id}" and its
// operationId when it has one.
func (o *Operation) Name() string {
	name := o.Method + " " + o.Template
	if o.ID != "" {
		name += " (" + o.ID + ")"
	}
	return name
}

// Header returns the header parameter called name (case-insensitively).
func (o *Operation) Header(name string) (Param, bool) {
	for _, p := range o.HeaderParams {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Param{}, false
}

// Declares reports whether status is answered by a response of its own,
// of its class ("4XX") or by "default", which declares every status.
func (o *Operation) Declares(status int) bool {
	code := strconv.Itoa(status)
	class := code[:1] + "XX"
	for _, r := range o.Responses {
		if r == code || strings.EqualFold(r, class) || r == "default" {
			return true
		}
	}
	return false
}

// Load reads the description at path. Its error says what is wrong in
// terms a user can fix: not OpenAPI 3.x nor Swagger 2.0, too large, not
// YAML or JSON, no paths. A $ref that does not resolve is not an error:
// in a part idemlint does not read it is counted in a note, and one an
// operation needs leaves that operation out, named in a note.
func Load(path string) (*API, error) {
	data, err := fileset.ReadLimited(path, MaxFileSize, "an OpenAPI description")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	src, err := parseSource(path, data)
	if err != nil {
		return nil, err
	}
	api := &API{Path: path}
	if api.abs, err = filepath.Abs(path); err != nil {
		return nil, err
	}
	src.abs = api.abs
	root := src.root
	if !root.isMap() {
		return nil, fmt.Errorf("%s: not an OpenAPI description: not a YAML or JSON object", path)
	}
	api.Version = root.val("openapi").str()
	swagger := root.val("swagger").str()
	switch {
	case strings.HasPrefix(api.Version, "3."):
	case api.Version == "" && swagger == "2.0":
		api.Version = swagger
	case api.Version == "" && swagger == "":
		return nil, fmt.Errorf(`%s: not an OpenAPI description: no "openapi" or "swagger" field`, path)
	default:
		return nil, fmt.Errorf("%s: OpenAPI %q is not supported; idemlint reads Swagger 2.0 and OpenAPI 3.x", path, cmp.Or(api.Version, swagger))
	}
	paths := root.val("paths")
	if !paths.isMap() || len(mapKeys(paths)) == 0 {
		return nil, fmt.Errorf(`%s: the OpenAPI description has no "paths"`, path)
	}
	api.InfoVersion = root.val("info").val("version").str()
	r := newResolver(filepath.Dir(api.abs), filepath.Dir(path), src)
	rd := &reader{api: api, r: r, v2: api.Version == "2.0", root: root, needed: map[Location]bool{}}
	docBases := rd.basePaths(root)
	paths.members(func(template string, at keyAt, item node) bool {
		rd.pathItem(template, at, item, docBases)
		return true
	})
	slices.SortFunc(api.Operations, func(a, b *Operation) int {
		if c := strings.Compare(a.Template, b.Template); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	rd.unresolvedElsewhere()
	rd.bodyKey()
	api.index()
	return api, nil
}

// reader reads one description.
type reader struct {
	api  *API
	r    *resolver
	v2   bool // Swagger 2.0
	root node
	// needed are the $refs that left an operation out, already named in
	// a note.
	needed map[Location]bool
}

// mapKeys are the keys of a mapping.
func mapKeys(n node) []string {
	var keys []string
	n.members(func(k string, _ keyAt, _ node) bool {
		keys = append(keys, k)
		return true
	})
	return keys
}

// pathItem reads the operations of one path item.
func (rd *reader) pathItem(template string, at keyAt, item node, docBases []string) {
	if !strings.HasPrefix(template, "/") {
		return // an extension ("x-...")
	}
	itemPointer := "/paths/" + jsontree.EscapePointer(template)
	itemAt := at.at()
	if ref := item.val("$ref"); ref.ok() {
		t := rd.r.follow(item, itemAt, itemPointer)
		if t.err != nil {
			rd.needed[ref.at()] = true
			rd.note(NoteUnreadable, fmt.Sprintf("%s: path item %s: %v", ref.at(), template, t.err))
			return
		}
		item, itemPointer = t.n, t.pointer
	}
	itemBases := docBases
	if !rd.v2 && len(item.val("servers").items()) > 0 {
		itemBases = rd.basePaths(item)
	}
	item.members(func(key string, at keyAt, op node) bool {
		method, field := operationMethod(key)
		if method == "" {
			if key == "additionalOperations" {
				op.members(func(m string, at keyAt, op node) bool {
					rd.operation(template, strings.ToUpper(m), "additionalOperations/"+jsontree.EscapePointer(m), at, op, item, itemPointer, itemBases)
					return true
				})
			}
			return true
		}
		rd.operation(template, method, field, at, op, item, itemPointer, itemBases)
		return true
	})
}

// operationMethod is the method of a path item's fixed field, "" for a
// field that is no operation.
func operationMethod(key string) (method, field string) {
	switch key {
	case "get", "put", "post", "delete", "options", "head", "patch", "trace", "query":
		return strings.ToUpper(key), key
	}
	return "", ""
}

// operation reads one operation; one a $ref it needs does not resolve for
// is left out, with a note.
func (rd *reader) operation(template, method, field string, at keyAt, op, item node, itemPointer string, bases []string) {
	o := &Operation{
		Method:    method,
		Template:  template,
		BasePaths: bases,
		ID:        op.val("operationId").str(),
		At:        at.at(),
		Pointer:   itemPointer + "/" + field,
	}
	for _, t := range op.val("tags").items() {
		o.Tags = append(o.Tags, t.str())
	}
	if !rd.v2 && len(op.val("servers").items()) > 0 {
		o.BasePaths = rd.basePaths(op)
	}
	responses, responsesAt := op.get("responses")
	o.ResponsesAt = o.At
	if responses.ok() {
		o.ResponsesAt = responsesAt.at()
	}
	var missing error
	responses.members(func(code string, _ keyAt, resp node) bool {
		if strings.HasPrefix(code, "x-") {
			return true
		}
		if ref := resp.val("$ref"); ref.ok() {
			if t := rd.r.follow(resp, o.At, ""); t.err != nil {
				rd.needed[ref.at()] = true
				missing = t.err
				return false
			}
		}
		o.Responses = append(o.Responses, code)
		return true
	})
	slices.Sort(o.Responses)
	if missing == nil {
		o.HeaderParams, missing = rd.headerParams(item.val("parameters"), op.val("parameters"), itemPointer, o.Pointer, o.At)
	}
	if missing != nil {
		rd.note(NoteUnreadable, fmt.Sprintf("%s: %s: %v", o.At, o.Name(), missing))
		return
	}
	if rd.v2 {
		rd.bodyV2(o, op)
	} else {
		rd.body(o, op)
	}
	rd.api.Operations = append(rd.api.Operations, o)
}

// headerParams merges the header parameters of a path item and of one of
// its operations: an operation's parameter overrides the path item's of
// the same name (OpenAPI: name and location identify a parameter). Its
// error is a parameter's $ref that does not resolve.
func (rd *reader) headerParams(itemParams, opParams node, itemPointer, opPointer string, opAt Location) ([]Param, error) {
	var out []Param
	add := func(params node, pointer string) error {
		for i, ref := range params.items() {
			param := Param{At: firstKeyAt(ref, opAt), Pointer: pointer + "/parameters/" + strconv.Itoa(i)}
			p := ref
			if r := ref.val("$ref"); r.ok() {
				t := rd.r.follow(ref, opAt, "")
				if t.err != nil {
					rd.needed[r.at()] = true
					return t.err
				}
				// At is the shared definition's, maybe in another file:
				// the pointer is the fragment of the $ref, in that file.
				p, param.At, param.Pointer = t.n, t.at, t.pointer
			}
			if !strings.EqualFold(p.val("in").str(), "header") {
				continue
			}
			param.Name, param.Required, param.Description = p.val("name").str(), p.val("required").truth(), p.val("description").str()
			if j := slices.IndexFunc(out, func(q Param) bool { return strings.EqualFold(q.Name, param.Name) }); j >= 0 {
				out[j] = param
			} else {
				out = append(out, param)
			}
		}
		return nil
	}
	if err := add(itemParams, itemPointer); err != nil {
		return nil, err
	}
	return out, add(opParams, opPointer)
}

// firstKeyAt is where the first key of a mapping is written, else
// fallback.
func firstKeyAt(n node, fallback Location) Location {
	at := fallback
	n.members(func(_ string, k keyAt, _ node) bool {
		at = k.at()
		return false
	})
	return at
}

// body reads an OpenAPI 3 request body: its media types, the example of
// its JSON one and the name of a property that carries the idempotency
// key. A $ref in it that does not resolve is ignored (and counted).
func (rd *reader) body(o *Operation, op node) {
	body := rd.r.follow(op.val("requestBody"), o.At, "")
	if body.err != nil {
		return
	}
	content := body.n.val("content")
	var jsonMedia node
	content.members(func(name string, _ keyAt, media node) bool {
		mt := mediaType(name)
		o.RequestMediaTypes = append(o.RequestMediaTypes, mt)
		if !jsonMedia.ok() && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
			jsonMedia = media
		}
		if o.bodyKey == "" {
			o.bodyKey = rd.keyProperty(media.val("schema"))
		}
		return true
	})
	slices.Sort(o.RequestMediaTypes)
	o.RequestMediaTypes = slices.Compact(o.RequestMediaTypes)
	if app := content.val("application/json"); app.ok() {
		jsonMedia = app
	}
	o.RequestExample = rd.example(jsonMedia)
}

// bodyV2 reads a Swagger 2.0 request body: a "body" parameter's schema or
// "formData" parameters, and the media types of "consumes".
func (rd *reader) bodyV2(o *Operation, op node) {
	hasBody, form := false, false
	for _, p := range op.val("parameters").items() {
		t := rd.r.follow(p, o.At, "")
		if t.err != nil {
			continue
		}
		switch t.n.val("in").str() {
		case "body":
			hasBody = true
			if o.bodyKey == "" {
				o.bodyKey = rd.keyProperty(t.n.val("schema"))
			}
		case "formData":
			form = true
			if name := t.n.val("name").str(); o.bodyKey == "" && mentionsIdempotency(name) {
				o.bodyKey = name
			}
		}
	}
	if !hasBody && !form {
		return
	}
	consumes := op.val("consumes")
	if !consumes.ok() {
		consumes = rd.root.val("consumes")
	}
	for _, c := range consumes.items() {
		o.RequestMediaTypes = append(o.RequestMediaTypes, mediaType(c.str()))
	}
	if len(o.RequestMediaTypes) == 0 {
		o.RequestMediaTypes = []string{"application/json"}
		if form {
			o.RequestMediaTypes = []string{"application/x-www-form-urlencoded"}
		}
	}
	slices.Sort(o.RequestMediaTypes)
	o.RequestMediaTypes = slices.Compact(o.RequestMediaTypes)
}

// mediaType is a media type in lower case without its parameters.
func mediaType(name string) string {
	mt, _, _ := strings.Cut(name, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// keyProperty is the name of a top-level property of schema (through
// $refs and allOf) that carries an idempotency key, "" when none does.
func (rd *reader) keyProperty(schema node) string {
	var find func(n node, depth int) string
	find = func(n node, depth int) string {
		t := rd.r.follow(n, Location{}, "")
		if t.err != nil || depth > 8 {
			return ""
		}
		var name string
		t.n.val("properties").members(func(k string, _ keyAt, _ node) bool {
			if mentionsIdempotency(k) {
				name = k
				return false
			}
			return true
		})
		for _, sub := range t.n.val("allOf").items() {
			if name == "" {
				name = find(sub, depth+1)
			}
		}
		return name
	}
	return find(schema, 0)
}

// mentionsIdempotency reports whether s speaks of idempotency:
// "Idempotency-Key", "idempotency_key", "an idempotent retry".
func mentionsIdempotency(s string) bool { return strings.Contains(strings.ToLower(s), "idempoten") }

// example is a media type's example as compact JSON: its "example",
// else its first entry of "examples" by name; nil when there is none or
// it cannot be written as JSON.
func (rd *reader) example(media node) json.RawMessage {
	if !media.ok() {
		return nil
	}
	value := media.val("example")
	if !value.ok() {
		examples := media.val("examples")
		names := mapKeys(examples)
		slices.Sort(names)
		for _, name := range names {
			t := rd.r.follow(examples.val(name), Location{}, "")
			if v := t.n.val("value"); t.err == nil && v.ok() {
				value = v
				break
			}
		}
	}
	if !value.ok() {
		return nil
	}
	v, err := value.decode()
	if err != nil || v == nil {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return data
}

// basePaths are the path parts of the server URLs of n (the document, a
// path item or an operation), variables at their defaults, without a
// trailing slash: "https://api.example.com/v1/" and "/v1" both give
// "/v1". No servers means "", the root; Swagger 2.0's is its "basePath".
func (rd *reader) basePaths(n node) []string {
	var out []string
	if rd.v2 {
		if base := strings.TrimRight(n.val("basePath").str(), "/"); base != "" {
			out = append(out, "/"+strings.TrimLeft(base, "/"))
		}
	}
	for _, s := range n.val("servers").items() {
		raw := s.val("url").str()
		vars := s.val("variables")
		names := mapKeys(vars)
		slices.Sort(names) // sorted: a default may hold "{...}"
		for _, name := range names {
			raw = strings.ReplaceAll(raw, "{"+name+"}", vars.val(name).val("default").str())
		}
		base := ""
		if u, err := url.Parse(raw); err == nil {
			base = u.Path
		}
		if base != "" && !strings.HasPrefix(base, "/") {
			base = "/" + base // a relative server URL such as "api/v1"
		}
		base = strings.TrimRight(base, "/")
		if !slices.Contains(out, base) {
			out = append(out, base)
		}
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// unresolvedElsewhere counts, in one note, the $refs of the description
// that do not resolve and that no operation needed: idemlint does not
// read what they are in.
func (rd *reader) unresolvedElsewhere() {
	rd.root.walkRefs(func(ref string, at node) {
		if rd.needed[at.at()] {
			return
		}
		if t := rd.r.resolve(at.src, ref); t.err != nil {
			rd.note(NoteIgnoredRef, fmt.Sprintf("%s: %v", at.at(), t.err))
		}
	})
}

// bodyKey decides whether the description carries its idempotency key in
// the request body: no header parameter of a state-changing operation
// speaks of idempotency, and the body of one has a property that does.
func (rd *reader) bodyKey() {
	counts := map[string]int{}
	for _, o := range rd.api.Operations {
		if !o.StateChanging() {
			continue
		}
		for _, p := range o.HeaderParams {
			if mentionsIdempotency(p.Name) || mentionsIdempotency(p.Description) {
				return
			}
		}
		if o.bodyKey != "" {
			counts[o.bodyKey]++
		}
	}
	for _, o := range rd.api.Operations {
		if o.bodyKey != "" && o.StateChanging() && counts[o.bodyKey] > counts[rd.api.BodyKey] {
			rd.api.BodyKey = o.bodyKey
		}
	}
	for _, o := range rd.api.Operations {
		if o.StateChanging() && o.bodyKey == rd.api.BodyKey && rd.api.BodyKey != "" {
			rd.note(NoteBodyKey, fmt.Sprintf("%s (body property %q)", o.Name(), o.bodyKey))
		}
	}
}

// note adds a note to the description's.
func (rd *reader) note(kind *NoteKind, instance string) {
	rd.api.Notes = append(rd.api.Notes, Note{Kind: kind, Instance: instance})
}

// String is "file:line:column".
func (l Location) String() string { return fmt.Sprintf("%s:%d:%d", l.File, l.Line, l.Column) }
