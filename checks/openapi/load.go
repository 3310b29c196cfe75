// Package openapi reads an OpenAPI 3.x description of the API a browser
// calls (spec section 7): its operations with their header parameters,
// responses and positions in the file, and the full paths a browser sends
// them to. The rules that hold a boundary set to it (IDL301-IDL304, one
// file each, listed in Rules) live here too as rules of package checks;
// they read the description a command supplies to a run as the input
// Description. "init --from-openapi" builds a starter set from it
// (Starter).
//
// Loading and $ref resolution are github.com/getkin/kin-openapi's. Nothing
// is ever fetched from the network: a $ref to a URL is refused, and a $ref
// to another file must stay inside the directory of the description.
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/idemlint/idemlint/schemas/fileset"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// MaxFileSize bounds each file of an API description, as boundary
// documents are bounded. Loading with positions costs about 55 times the
// file's size in memory for YAML and 95 times for JSON (which the loader
// reads as YAML flow style), so the limit also bounds memory, near 0.8 GB
// at worst; API descriptions of one product are far smaller.
const MaxFileSize = 8 << 20

// API is a loaded OpenAPI description.
type API struct {
	Path    string // the file as named
	Version string // the "openapi" field, e.g. "3.1.0"
	// InfoVersion is info.version, the version of the API itself.
	InfoVersion string
	Operations  []*Operation // sorted by path template, then method

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
	// RequestMediaTypes are the media types of its request body
	// ("application/json"), lower case, without parameters, sorted.
	RequestMediaTypes []string
}

// Param is a header parameter.
type Param struct {
	Name     string
	Required bool
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
// (spec section 7: POST, PUT, PATCH, DELETE).
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

// Declares reports whether status is answered by a response of its own or
// of its class ("4XX"); "default" promises nothing in particular, so it
// does not count.
func (o *Operation) Declares(status int) bool {
	code := strconv.Itoa(status)
	class := code[:1] + "XX"
	for _, r := range o.Responses {
		if r == code || strings.EqualFold(r, class) {
			return true
		}
	}
	return false
}

// Load reads the description at path. Its error says what is wrong in
// terms a user can fix: not OpenAPI 3.x, too large, a $ref that does not
// resolve or that points outside (a URL, a file outside the directory).
func Load(path string) (*API, error) {
	data, err := fileset.ReadLimited(path, MaxFileSize, "an OpenAPI description")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := strictJSON(data); err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	root, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	loader.IncludeOrigin = true
	loader.IsExternalRefsAllowed = true
	loader.ReadFromURIFunc = localFilesUnder(root)
	doc, err := loader.LoadFromDataWithPath(data, &url.URL{Path: filepath.ToSlash(path)})
	if err != nil {
		return nil, fmt.Errorf("%s: cannot load the OpenAPI description: %w", path, err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		if doc.OpenAPI == "" {
			return nil, fmt.Errorf(`%s: not an OpenAPI 3.x description: no "openapi" field (Swagger 2.0 files are not supported)`, path)
		}
		return nil, fmt.Errorf("%s: OpenAPI %q is not supported; idemlint reads OpenAPI 3.0 and 3.1", path, doc.OpenAPI)
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, fmt.Errorf(`%s: the OpenAPI description has no "paths"`, path)
	}
	api := &API{Path: path, Version: doc.OpenAPI}
	if api.abs, err = filepath.Abs(path); err != nil {
		return nil, err
	}
	if doc.Info != nil {
		api.InfoVersion = doc.Info.Version
	}
	docBases := basePaths(doc.Servers)
	pathsAt := keyLocation(doc.Paths.Origin, Location{File: path, Line: 1, Column: 1})
	for _, template := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(template)
		itemBases := docBases
		if len(item.Servers) > 0 {
			itemBases = basePaths(item.Servers)
		}
		itemPointer := "/paths/" + jsontree.EscapePointer(template)
		itemAt := keyLocation(item.Origin, pathsAt)
		for method, op := range item.Operations() {
			o := &Operation{
				Method:    strings.ToUpper(method),
				Template:  template,
				BasePaths: itemBases,
				ID:        op.OperationID,
				Tags:      op.Tags,
				At:        keyLocation(op.Origin, itemAt),
				Pointer:   itemPointer + "/" + operationField(method),
			}
			if op.Servers != nil && len(*op.Servers) > 0 {
				o.BasePaths = basePaths(*op.Servers)
			}
			o.ResponsesAt = fieldLocation(op.Origin, "responses", o.At)
			if op.Responses != nil {
				o.Responses = slices.Sorted(maps.Keys(op.Responses.Map()))
			}
			o.HeaderParams = headerParams(item.Parameters, op.Parameters, itemPointer, o.Pointer, o.At)
			o.RequestExample = requestExample(op.RequestBody)
			o.RequestMediaTypes = requestMediaTypes(op.RequestBody)
			api.Operations = append(api.Operations, o)
		}
	}
	slices.SortFunc(api.Operations, func(a, b *Operation) int {
		if c := strings.Compare(a.Template, b.Template); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	api.index()
	return api, nil
}

// headerParams merges the header parameters of a path item and of one of
// its operations: an operation's parameter overrides the path item's of
// the same name (OpenAPI: name and location identify a parameter).
func headerParams(itemParams, opParams openapi3.Parameters, itemPointer, opPointer string, opAt Location) []Param {
	var out []Param
	add := func(params openapi3.Parameters, pointer string) {
		for i, ref := range params {
			p := ref.Value
			if p == nil || !strings.EqualFold(p.In, openapi3.ParameterInHeader) {
				continue
			}
			param := Param{Name: p.Name, Required: p.Required, At: keyLocation(p.Origin, opAt),
				Pointer: pointer + "/parameters/" + strconv.Itoa(i)}
			if ref.Ref != "" {
				// At is the shared definition's, maybe in another file:
				// the pointer is the fragment of the $ref, in that file.
				_, param.Pointer, _ = strings.Cut(ref.Ref, "#")
			}
			if j := slices.IndexFunc(out, func(q Param) bool { return strings.EqualFold(q.Name, p.Name) }); j >= 0 {
				out[j] = param
			} else {
				out = append(out, param)
			}
		}
	}
	add(itemParams, itemPointer)
	add(opParams, opPointer)
	return out
}

// requestExample is the example of a JSON request body: of the media type
// application/json, else the first "+json" one by name; its "example",
// else its first entry of "examples" by name. nil when there is none or it
// cannot be written as JSON.
func requestExample(body *openapi3.RequestBodyRef) json.RawMessage {
	if body == nil || body.Value == nil {
		return nil
	}
	content := body.Value.Content
	media := content.Get("application/json")
	if media == nil {
		for _, name := range slices.Sorted(maps.Keys(content)) {
			if strings.HasSuffix(strings.ToLower(name), "+json") {
				media = content[name]
				break
			}
		}
	}
	if media == nil {
		return nil
	}
	example := media.Example
	if example == nil {
		for _, name := range slices.Sorted(maps.Keys(media.Examples)) {
			if ref := media.Examples[name]; ref != nil && ref.Value != nil && ref.Value.Value != nil {
				example = ref.Value.Value
				break
			}
		}
	}
	if example == nil {
		return nil
	}
	data, err := json.Marshal(example)
	if err != nil {
		return nil
	}
	return data
}

// requestMediaTypes are the media types of a request body's content.
func requestMediaTypes(body *openapi3.RequestBodyRef) []string {
	if body == nil || body.Value == nil {
		return nil
	}
	var out []string
	for name := range body.Value.Content {
		mt, _, _ := strings.Cut(name, ";")
		out = append(out, strings.ToLower(strings.TrimSpace(mt)))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// basePaths are the path parts of server URLs, variables at their
// defaults, without a trailing slash: "https://api.example.com/v1/" and
// "/v1" both give "/v1". No servers means "/", the root.
func basePaths(servers openapi3.Servers) []string {
	var out []string
	for _, s := range servers {
		if s == nil {
			continue
		}
		raw := s.URL
		for _, name := range slices.Sorted(maps.Keys(s.Variables)) { // sorted: a default may hold "{...}"
			if v := s.Variables[name]; v != nil {
				raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
			}
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

// keyLocation is where an element's key is written, else fallback: the
// loader records no origin for what it reached through some $refs (a path
// item under components/pathItems).
func keyLocation(o *openapi3.Origin, fallback Location) Location {
	if o == nil || o.Key == nil {
		return fallback
	}
	return Location{File: fileName(o.Key.File, fallback.File), Line: o.Key.Line, Column: o.Key.Column}
}

// fileName turns the loader's name of a file, a URL path, back into a file
// path: the description's own name as the user gave it, or another file
// its $refs named.
func fileName(loaderName, description string) string {
	name, err := url.PathUnescape(loaderName)
	if err != nil || name == filepath.ToSlash(description) {
		return description
	}
	return filepath.FromSlash(name)
}

// fieldLocation is where the field name of the element with origin o is
// written, else fallback.
func fieldLocation(o *openapi3.Origin, name string, fallback Location) Location {
	if o == nil {
		return fallback
	}
	if loc, ok := o.Fields.Lookup(name); ok {
		return Location{File: fileName(loc.File, fallback.File), Line: loc.Line, Column: loc.Column}
	}
	return fallback
}

// localFilesUnder reads the files $refs name, refusing any URL (idemlint
// never uses the network) and any file outside root, so a description
// under review cannot make CI read the runner's files.
func localFilesUnder(root string) openapi3.ReadFromURIFunc {
	return func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		if u.Host != "" || (u.Scheme != "" && u.Scheme != "file") {
			return nil, fmt.Errorf("$ref to %s refused: idemlint never fetches over the network; download it next to the description and refer to the file", u.Redacted())
		}
		target, err := filepath.Abs(filepath.FromSlash(u.Path))
		if err != nil {
			return nil, err
		}
		if rel, err := filepath.Rel(root, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("$ref to %s refused: it is outside the directory of the description", u.Path)
		}
		return fileset.ReadLimited(target, MaxFileSize, "an OpenAPI description")
	}
}

// strictJSON checks a description written in JSON as strictly as boundary
// documents: the loader would read a duplicate key as the last one, and
// then without positions; YAML is left to the YAML parser, which refuses
// duplicates itself.
func strictJSON(data []byte) error {
	if !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
		return nil
	}
	if _, problems := jsontree.Parse(string(data)); len(problems) > 0 {
		pr := problems[0]
		return fmt.Errorf("%d:%d: not valid JSON: %s", pr.Line, pr.Column, pr.Message)
	}
	return nil
}

// operationField is the member of a path item holding the operation of
// method: a fixed field, or one of OpenAPI 3.2's additionalOperations.
func operationField(method string) string {
	switch m := strings.ToLower(method); m {
	case "get", "put", "post", "delete", "options", "head", "patch", "trace", "query":
		return m
	}
	return "additionalOperations/" + jsontree.EscapePointer(method)
}
