package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// StarterFile is one document of a starter set.
type StarterFile struct {
	Path string // slash-separated, relative to the set's directory: "orders/01-browser-to-bff.json"
	Data []byte
}

// Starter builds a starter boundary set from api (docs/openapi.md, A
// starter set from the description): one
// flow of four documents per tag, named after it in lower case with one
// "-" for each run of other characters than letters and digits
// ("Returns & Refunds" is "returns-refunds"; an operation goes to its
// first tag's flow; untagged operations, and all of them when no operation
// has a tag, to the flow "api"). template holds the four documents of a valid flow by
// file name, keyed on "boundary": each flow is a copy with its own
// components ("web" -> "<flow>-bff" -> "<flow>-gw" -> "<flow>-adapter"),
// the API's operations (the adapter's with their JSON request example as
// example.body), info.version as contract_version and the key header;
// every other field is the template's, as written.
// skipped names the operations whose method a boundary document cannot
// carry (TRACE). header is the key header (KeyHeader, or the user's).
func Starter(api *API, template map[string][]byte, header string) (files []StarterFile, skipped []string, err error) {
	flows := map[string][]*Operation{}
	for _, o := range api.Operations {
		if !boundaryMethod(o.Method) {
			skipped = append(skipped, o.Method+" "+o.Template)
			continue
		}
		flow := "api"
		if len(o.Tags) > 0 {
			flow = componentID(o.Tags[0]) // tags that differ only in case or punctuation share a flow
		}
		flows[flow] = append(flows[flow], o)
	}
	if len(flows) == 0 {
		return nil, skipped, fmt.Errorf("%s: no operation a boundary document can carry", api.Path)
	}
	names := make([]string, 0, len(flows))
	for name := range flows {
		names = append(names, name)
	}
	sort.Strings(names)
	fileNames := make([]string, 0, len(template))
	for name := range template {
		fileNames = append(fileNames, name)
	}
	sort.Strings(fileNames)
	for _, name := range names {
		for _, file := range fileNames {
			data, err := starterDocument(template[file], name, api, flows[name], header)
			if err != nil {
				return nil, nil, fmt.Errorf("starter template %s: %w", file, err)
			}
			files = append(files, StarterFile{Path: path.Join(name, file), Data: data})
		}
	}
	return files, skipped, nil
}

// member is a top-level member of a template document, its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// starterDocument rewrites one template document for the flow id.
func starterDocument(src []byte, id string, api *API, ops []*Operation, header string) ([]byte, error) {
	members, err := topLevel(src)
	if err != nil {
		return nil, err
	}
	var kind string
	for _, m := range members {
		if m.key == "boundary" {
			_ = json.Unmarshal(m.value, &kind)
		}
	}
	components := map[string]string{"browser_to_bff": "web", "bff_to_gateway": id + "-bff", "gateway_to_adapter": id + "-gw", "adapter": id + "-adapter"}
	next := map[string]string{"browser_to_bff": id + "-bff", "bff_to_gateway": id + "-gw", "gateway_to_adapter": id + "-adapter"}
	if components[kind] == "" {
		return nil, fmt.Errorf("unknown boundary %q", kind)
	}
	quotedKey, _ := json.Marshal(header)
	var out bytes.Buffer
	out.WriteString("{\n")
	for i, m := range members {
		value := m.value
		switch m.key {
		case "from":
			value = quote(components[kind])
		case "to":
			value = quote(next[kind])
		case "service":
			value = quote(components[kind])
		case "contract_version":
			if api.InfoVersion != "" {
				value = quote(api.InfoVersion)
			}
		case "operations":
			value = operations(ops, kind)
		case "idempotency_fingerprint":
			if c := bodyCanonicalization(ops); c != nil {
				value = bytes.Replace(value, []byte(`"canonicalization": "canonical_json"`), append([]byte(`"canonicalization": `), c...), 1)
			}
		default:
			value = bytes.ReplaceAll(value, []byte(`"x-idempotency-key"`), quotedKey)
		}
		fmt.Fprintf(&out, "  %s: %s", quote(m.key), value)
		if i < len(members)-1 {
			out.WriteByte(',')
		}
		out.WriteByte('\n')
	}
	out.WriteString("}\n")
	return out.Bytes(), nil
}

// topLevel splits a JSON object into its members, keeping each value's
// bytes (and so its layout) as written.
func topLevel(src []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var members []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var m member
		m.key, _ = t.(string)
		if err := dec.Decode(&m.value); err != nil {
			return nil, err
		}
		members = append(members, m)
	}
	return members, nil
}

// operations is the "operations" array of a flow of documents of kind, one
// operation a line; the browser edge's paths are those the browser calls
// (with the first server's base path), the later hops' the API's own
// templates. The adapter's operations carry the description's request
// example as example.body: conform probes the policy with it.
func operations(ops []*Operation, kind string) json.RawMessage {
	var b bytes.Buffer
	b.WriteString("[\n")
	keys := map[string]bool{}
	for i, o := range ops {
		p := o.Template
		if kind == "browser_to_bff" {
			p = o.BasePaths[0] + o.Template
		}
		fmt.Fprintf(&b, `    {"operation_key": %s, "method": %s, "path": %s`, quote(unique(OperationKey(o), keys)), quote(o.Method), quote(p))
		switch ct := exampleContentType(o); {
		case kind != "adapter":
		case ct != "":
			// conform sends the operation's bodies as its description does.
			fmt.Fprintf(&b, `, "example": {"headers": {"Content-Type": %s}}`, quote(ct))
		case o.RequestExample != nil:
			fmt.Fprintf(&b, `, "example": {"body": %s}`, o.RequestExample)
		}
		b.WriteByte('}')
		if i < len(ops)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("  ]")
	return b.Bytes()
}

// bodyCanonicalization is the fingerprint's canonicalization of the
// flow's request bodies by media type: canonical_json for JSON,
// canonical_form for a form, raw_bytes for any other type (a wildcard
// content type is "*/*"). One name when all agree and a single name can
// say it, else an object; nil when no operation declares a body.
func bodyCanonicalization(ops []*Operation) json.RawMessage {
	byType := map[string]string{}
	for _, o := range ops {
		for _, mt := range o.RequestMediaTypes {
			if !boundary.IsMediaTypeName(mt) {
				mt = "*/*"
			}
			byType[mt] = canonicalizationOf(mt)
		}
	}
	names := slices.Compact(slices.Sorted(maps.Values(byType)))
	switch {
	case len(names) == 0:
		return nil
	case len(names) == 1 && names[0] != "canonical_form": // a single name is canonical_json or raw_bytes
		return quote(names[0])
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, mt := range slices.Sorted(maps.Keys(byType)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", quote(mt), quote(byType[mt]))
	}
	b.WriteByte('}')
	return b.Bytes()
}

func canonicalizationOf(mediaType string) string {
	switch {
	case mediaType == "application/json" || strings.HasSuffix(mediaType, "+json"):
		return "canonical_json"
	case mediaType == formMediaType:
		return "canonical_form"
	}
	return "raw_bytes"
}

const formMediaType = "application/x-www-form-urlencoded"

// exampleContentType is the Content-Type conform must send for o: "" when
// o takes JSON (conform's default) or declares no body; else a form when
// it takes one, or its first named media type.
func exampleContentType(o *Operation) string {
	if len(o.RequestMediaTypes) == 0 || slices.ContainsFunc(o.RequestMediaTypes, func(mt string) bool { return canonicalizationOf(mt) == "canonical_json" }) {
		return ""
	}
	if slices.Contains(o.RequestMediaTypes, formMediaType) {
		return formMediaType
	}
	for _, mt := range o.RequestMediaTypes {
		if mt != "*/*" && boundary.IsMediaTypeName(mt) {
			return mt
		}
	}
	return ""
}

// OperationKey names an operation as init --from-openapi documents: its
// operationId
// lower-cased, every character outside [a-z0-9._:-] as "-"; without one
// (or with one that leaves no letter or digit to start with), its method
// and path: "post.orders.orderid.refunds".
func OperationKey(o *Operation) string {
	if key := strings.TrimLeft(sanitize(o.ID), "._:-"); key != "" {
		return key
	}
	key := strings.ToLower(o.Method)
	for _, seg := range strings.Split(o.Template, "/") {
		if seg = strings.Trim(sanitize(strings.Trim(seg, "{}")), "._:-"); seg != "" {
			key += "." + seg
		}
	}
	return key
}

// sanitize lower-cases s and replaces every character an operation_key
// cannot hold with "-".
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == ':', r == '-':
			return r
		}
		return '-'
	}, strings.ToLower(s))
}

// componentID turns a tag into the stem of a component id
// ([a-z0-9][a-z0-9._-]{0,62}), short enough for "<stem>-adapter".
func componentID(tag string) string {
	// Each run of other characters is one "-": "Returns & Refunds" is
	// "returns-refunds".
	id := strings.Join(strings.FieldsFunc(strings.ToLower(tag), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}), "-")
	if len(id) > 40 {
		id = strings.TrimRight(id[:40], "-")
	}
	if id == "" {
		return "api"
	}
	return id
}

// unique returns name, or name-2, name-3... when it is taken, and takes it.
func unique(name string, taken map[string]bool) string {
	candidate := name
	for n := 2; taken[candidate]; n++ {
		candidate = name + "-" + strconv.Itoa(n)
	}
	taken[candidate] = true
	return candidate
}

// KeyGaps names the operations of api that "openapi check" will report
// under IDL302 against a starter set whose key header is header: a
// state-changing operation whose description does not declare it as a
// required header parameter. The starter's browser edge requires the key
// for it all the same: without, "check" reports IDL101 and clients that
// retry execute twice; the description is what needs the fix. None when
// the description carries its key in the body (IDL302 is then silent).
func KeyGaps(api *API, header string) []string {
	if api.BodyKey != "" {
		return nil
	}
	var gaps []string
	for _, o := range api.Operations {
		if !o.StateChanging() {
			continue
		}
		if p, ok := o.Header(header); !ok || !p.Required {
			gaps = append(gaps, o.Name())
		}
	}
	return gaps
}

// KeyHeader is the idempotency key header the description declares: of
// the header parameters (required or not) of its state-changing
// operations, the one declared on the most operations among those whose
// name speaks of idempotency ("Idempotency-Key"), else among those whose
// description does ("PayPal-Request-Id"); ties go to the first in path
// order. ok is false, and the header "x-idempotency-key", when none
// does.
func KeyHeader(api *API) (header string, ok bool) {
	for _, speaks := range []func(Param) bool{
		func(p Param) bool { return mentionsIdempotency(p.Name) },
		func(p Param) bool { return mentionsIdempotency(p.Description) },
	} {
		counts := map[string]int{}
		var order []string // lower-cased names in path order
		spelled := map[string]string{}
		for _, o := range api.Operations {
			if !o.StateChanging() {
				continue
			}
			for _, p := range o.HeaderParams {
				if !speaks(p) || !IsHeaderName(p.Name) {
					continue
				}
				name := strings.ToLower(p.Name)
				if counts[name] == 0 {
					order = append(order, name)
					spelled[name] = p.Name
				}
				counts[name]++
			}
		}
		best := ""
		for _, name := range order {
			if counts[name] > counts[best] {
				best = name
			}
		}
		if best != "" {
			return spelled[best], true
		}
	}
	return "x-idempotency-key", false
}

// IsHeaderName reports whether s is an RFC 9110 token, what a header name
// is.
func IsHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// boundaryMethod reports whether a boundary document can carry method.
func boundaryMethod(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}

func quote(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
