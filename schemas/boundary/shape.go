package boundary

import (
	"math/big"
	"strings"

	"github.com/idemlint/idemlint/schemas/jsontree"
)

// The decoder's own verdict on the JSON Schema of a document's kind
// (IDL002's schema stage): the schemas under schemas/ restated as Go
// values, walked over the parsed tree once, without converting it or
// allocating. A document that conforms needs no schema validator at all;
// one that does not goes to the validator, which words the violations.
// So the cost of the verdict does not depend on how much documents repeat
// one another, and a caller that wants only the verdict (the reference
// engine) need not link a JSON Schema library. A differential fuzz test
// holds this verdict equal to the validator's on every document.
//
// Each shape below names the schema definition it restates.

// shape holds a value to one schema (sub)definition: it returns the
// value where the first violation lies (an object that lacks a required
// member, a member the object may not have, a value of the wrong type or
// beyond a bound), nil when the value conforms.
type shape func(n *jsontree.Node) *jsontree.Node

// nonconforming returns where root, a parsed top-level object, first
// departs from the schema of its boundary kind; nil when it conforms. A
// document of no known kind is held to the envelope schema, which then
// always fails at its "boundary" (or its root, when that is missing).
func nonconforming(root *jsontree.Node) *jsontree.Node {
	k := root.Get("boundary")
	if k == nil {
		return root
	}
	if k.Kind != jsontree.String {
		return k
	}
	s, ok := kindShapes[Kind(k.Text)]
	if !ok {
		return k
	}
	return s(root)
}

// is makes a shape of a predicate on a value: the value is to blame.
func is(ok func(n *jsontree.Node) bool) shape {
	return func(n *jsontree.Node) *jsontree.Node {
		if ok(n) {
			return nil
		}
		return n
	}
}

// kindShapes are the schemas of the kinds (<kind>.schema.json): the
// members of each kind, its required ones, and http_idempotency when an
// operation is state-changing.
var kindShapes = func() map[Kind]shape {
	common := fields{
		"$schema":      isString,
		"spec_version": constString(SpecVersion),
		"operations":   operationList,
	}
	edge := func(kind Kind, extra fields) fields {
		f := common.with(fields{"boundary": constString(string(kind)), "from": componentID, "to": componentID,
			"header_to_allow_inbound": headerList, "sets_headers": headerList, "http_idempotency": httpIdempotency, "as_built": asBuilt})
		return f.with(extra)
	}
	kinds := map[Kind]shape{
		BrowserToBFF: object(edge(BrowserToBFF, fields{"cors_allowed_headers": headerList, "http_retry": httpRetry}),
			"spec_version", "boundary", "from", "to", "operations"),
		BFFToGateway: object(edge(BFFToGateway, fields{"header_to_allow_outbound": headerList, "http_retry": httpRetry}),
			"spec_version", "boundary", "from", "to", "operations"),
		GatewayToAdapter: object(edge(GatewayToAdapter, fields{"contract_version": nonEmptyString,
			"header_to_allow_outbound": headerList, "http_retry": httpRetry, "adapter": embeddedAdapterPolicy}),
			"spec_version", "boundary", "from", "to", "contract_version", "operations"),
		Adapter: object(common.with(policyFields).with(fields{"boundary": constString(string(Adapter)),
			"service": componentID, "contract_version": nonEmptyString,
			"header_to_allow_inbound": headerList, "http_idempotency": httpIdempotency}),
			"spec_version", "boundary", "service", "contract_version", "operations"),
	}
	for k, s := range kinds {
		kinds[k] = func(n *jsontree.Node) *jsontree.Node {
			if bad := s(n); bad != nil {
				return bad
			}
			if !idempotencyWhenStateChanging(n) {
				return n
			}
			return nil
		}
	}
	return kinds
}()

// fields are an object's properties by name.
type fields map[string]shape

// with returns f and more in a new map.
func (f fields) with(more fields) fields {
	out := make(fields, len(f)+len(more))
	for k, v := range f {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// object is every object definition of the schemas: the properties,
// extensions ("^x-": anything), nothing else, and the required members.
func object(props fields, required ...string) shape {
	return func(n *jsontree.Node) *jsontree.Node {
		if n.Kind != jsontree.Object {
			return n
		}
		for _, m := range n.Members {
			if s, ok := props[m.Key]; ok {
				if bad := s(m.Value); bad != nil {
					return bad
				}
			} else if !strings.HasPrefix(m.Key, "x-") {
				return m.Value
			}
		}
		for _, r := range required {
			if n.Get(r) == nil {
				return n
			}
		}
		return nil
	}
}

// arrayOf is an array of at least least items of one shape.
func arrayOf(item shape, least int) shape {
	return func(n *jsontree.Node) *jsontree.Node {
		if n.Kind != jsontree.Array || len(n.Items) < least {
			return n
		}
		for _, it := range n.Items {
			if bad := item(it); bad != nil {
				return bad
			}
		}
		return nil
	}
}

// stringWhere is a string for which ok holds.
func stringWhere(ok func(string) bool) shape {
	return is(func(n *jsontree.Node) bool { return n.Kind == jsontree.String && ok(n.Text) })
}

// oneOf is an enum of strings (an enum compares JSON values: a number or
// null is none of them).
func oneOf(values ...string) shape {
	return stringWhere(func(s string) bool {
		for _, v := range values {
			if s == v {
				return true
			}
		}
		return false
	})
}

func constString(v string) shape { return oneOf(v) }

// anyOf is any of shapes; the value itself is to blame when it is none.
func anyOf(shapes ...shape) shape {
	return is(func(n *jsontree.Node) bool {
		for _, s := range shapes {
			if s(n) == nil {
				return true
			}
		}
		return false
	})
}

// integer is {"type": "integer", "minimum": least, "maximum": most}. JSON
// Schema compares numbers exactly, whatever their spelling (1e2 and 100.0
// are the integer 100); the plain spelling is read without allocating.
func integer(least, most int64) shape {
	return is(func(n *jsontree.Node) bool {
		if n.Kind != jsontree.Number {
			return false
		}
		if v, ok := plainInt(n.Text); ok {
			return least <= v && v <= most
		}
		r, ok := new(big.Rat).SetString(n.Text)
		return ok && r.IsInt() && r.Cmp(big.NewRat(least, 1)) >= 0 && r.Cmp(big.NewRat(most, 1)) <= 0
	})
}

// numberAtLeast is {"type": "number", "minimum": least}.
func numberAtLeast(least int64) shape {
	return is(func(n *jsontree.Node) bool {
		if n.Kind != jsontree.Number {
			return false
		}
		if v, ok := plainInt(n.Text); ok {
			return v >= least
		}
		r, ok := new(big.Rat).SetString(n.Text)
		return ok && r.Cmp(big.NewRat(least, 1)) >= 0
	})
}

// plainInt reads a number literal of at most 18 digits without fraction
// or exponent, which an int64 holds exactly.
func plainInt(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

var (
	isString  = is(func(n *jsontree.Node) bool { return n.Kind == jsontree.String })
	isBoolean = is(func(n *jsontree.Node) bool { return n.Kind == jsontree.Bool })
	anything  = is(func(*jsontree.Node) bool { return true })
)

// The definitions of common.schema.json, by name.
var (
	nonEmptyString = stringWhere(func(s string) bool { return s != "" })
	componentID    = stringWhere(isComponentID)
	headerName     = stringWhere(IsToken)
	headerList     = arrayOf(headerName, 0)
	headerRef      = stringWhere(func(s string) bool {
		name, ok := strings.CutPrefix(s, "header:")
		return ok && IsToken(name)
	})
	method     = oneOf("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
	methodList = arrayOf(method, 0)
	status     = integer(100, 599)
	errorCode  = nonEmptyString
	duration   = stringWhere(isDuration)
	stringList = arrayOf(isString, 0)

	milliseconds         = integer(0, 86400000)
	positiveMilliseconds = integer(1, 86400000)

	operationList = arrayOf(object(fields{
		"operation_key":  stringWhere(isOperationKey),
		"method":         method,
		"path":           stringWhere(func(s string) bool { return strings.HasPrefix(s, "/") }),
		"state_changing": isBoolean,
		"example":        object(fields{"body": anything, "headers": headersObject}),
	}, "operation_key", "method", "path"), 1)

	asBuilt = arrayOf(object(fields{"kind": nonEmptyString, "name": nonEmptyString, "namespace": nonEmptyString},
		"kind", "name"), 0)

	httpIdempotency = object(fields{
		"header":          headerName,
		"role":            oneOf("owner", "validate_only", "passthrough"),
		"require_key":     object(fields{"methods": methodList, "operations": stringList}),
		"on_missing":      object(fields{"action": oneOf("reject"), "status": status, "error_code": errorCode}),
		"echo_key_header": isBoolean,
		"key_format":      object(fields{"max_length": integer(1, 8192), "pattern": isString}),
	})

	httpRetry = object(fields{
		"enabled":                  isBoolean,
		"max_attempts":             integer(1, 100),
		"requires_idempotency_key": isBoolean,
		"mode":                     oneOf("validate_only", "none"),
		"methods":                  methodList,
		"retry_on": arrayOf(anyOf(
			oneOf("connect_error", "timeout", "429", "500", "502", "503", "504"),
			integer(100, 599)), 0),
		"per_try_timeout_ms": positiveMilliseconds,
		"backoff": object(fields{"initial_ms": milliseconds, "max_ms": milliseconds,
			"multiplier": numberAtLeast(1), "jitter": isBoolean}),
	})

	// policyFields are the owner policy's sections, in an adapter
	// document and in the embedded adapter object alike.
	policyFields = fields{
		"idempotency_scope": stringList,
		"scope_sources":     object(fields{"tenant_id": headerRef, "actor_id": headerRef}),
		"idempotency_fingerprint": object(fields{
			"canonicalization": anyOf(oneOf("canonical_json", "raw_bytes"), canonicalizationByMediaType),
			"inputs":           arrayOf(anyOf(oneOf("method", "path", "query", "body"), headerRef), 0),
			"algorithm":        oneOf("sha256", "sha512"),
			"exclude_fields":   arrayOf(stringWhere(isJSONPointer), 0),
		}),
		"idempotency_replay": object(fields{
			"on_completed":    oneOf("stored_response"),
			"same_status":     isBoolean,
			"same_body":       isBoolean,
			"on_failed":       oneOf("stored_response", "reexecute"),
			"replayed_header": headerName,
		}),
		"idempotency_inflight": object(fields{
			"policy":          oneOf("wait", "reject"),
			"status":          status,
			"wait_timeout_ms": milliseconds,
			"lease_ms":        positiveMilliseconds,
		}),
		"idempotency_conflict": object(fields{
			"on_payload_mismatch": object(fields{"status": status, "error_code": errorCode}),
		}),
		"idempotency_storage": object(fields{
			"tier":               oneOf("default", "billing", "irreversible"),
			"ttl":                duration,
			"ttl_reduction":      object(fields{"declared": isBoolean, "reason": nonEmptyString}),
			"backend":            isString,
			"max_records":        integer(1, 1000000000),
			"max_bytes":          integer(1, 1<<40),
			"max_tenant_percent": integer(1, 100),
		}),
		"observability": object(fields{"log_fields": stringList, "request_id_header": headerName}),
	}

	embeddedAdapterPolicy = object(policyFields.with(fields{"service": componentID}), "service")
)

// canonicalizationByMediaType is an object of at least one member, each
// named by a media type and holding a canonicalization name.
func canonicalizationByMediaType(n *jsontree.Node) *jsontree.Node {
	if n.Kind != jsontree.Object || len(n.Members) == 0 {
		return n
	}
	for _, m := range n.Members {
		if !IsMediaTypeName(m.Key) {
			return m.Value
		}
		if bad := mediaCanonicalizationName(m.Value); bad != nil {
			return bad
		}
	}
	return nil
}

var mediaCanonicalizationName = oneOf("canonical_json", "canonical_form", "raw_bytes")

// IsMediaTypeName reports whether s names media types in a
// canonicalization object: "*/*", or a lower-case "type/subtype" without
// parameters (RFC 6838 restricted names,
// ^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$).
func IsMediaTypeName(s string) bool {
	if s == "*/*" {
		return true
	}
	typ, sub, ok := strings.Cut(s, "/")
	return ok && isRestrictedName(typ) && isRestrictedName(sub)
}

func isRestrictedName(s string) bool {
	if s == "" || len(s) > 127 || !isLowerAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLowerAlnum(c) && strings.IndexByte("!#$&^_.+-", c) < 0 {
			return false
		}
	}
	return true
}

// headersObject is example.headers: every member a string, extensions
// included (its schema has no "^x-" exception).
func headersObject(n *jsontree.Node) *jsontree.Node {
	if n.Kind != jsontree.Object {
		return n
	}
	for _, m := range n.Members {
		if m.Value.Kind != jsontree.String {
			return m.Value
		}
	}
	return nil
}

// idempotencyWhenStateChanging is httpIdempotencyWhenStateChanging:
// without http_idempotency, no operation may be state-changing (a
// method of POST, PUT, PATCH or DELETE with state_changing anything but
// false, or state_changing true).
func idempotencyWhenStateChanging(root *jsontree.Node) bool {
	if root.Get("http_idempotency") != nil {
		return true
	}
	ops := root.Get("operations")
	if ops == nil || ops.Kind != jsontree.Array {
		return true
	}
	for _, op := range ops.Items {
		if op.Kind != jsontree.Object {
			continue
		}
		sc := op.Get("state_changing")
		if sc != nil && sc.Kind == jsontree.Bool && sc.True {
			return false
		}
		m := op.Get("method")
		if m != nil && m.Kind == jsontree.String && StateChangingByDefault(m.Text) &&
			(sc == nil || sc.Kind != jsontree.Bool || sc.True) {
			return false
		}
	}
	return true
}

// isComponentID is ^[a-z0-9][a-z0-9._-]{0,62}$.
func isComponentID(s string) bool {
	if s == "" || len(s) > 63 || !isLowerAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// isOperationKey is ^[a-z0-9][a-z0-9._:-]*$.
func isOperationKey(s string) bool {
	if s == "" || !isLowerAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '.' && c != '_' && c != ':' && c != '-' {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// isDuration is ^[0-9]+[smhdw]$.
func isDuration(s string) bool {
	if len(s) < 2 || strings.IndexByte("smhdw", s[len(s)-1]) < 0 {
		return false
	}
	for i := 0; i < len(s)-1; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isJSONPointer is ^(/([^~]|~[01])*)+$: a non-empty pointer whose "~"
// are escapes.
func isJSONPointer(s string) bool {
	if !strings.HasPrefix(s, "/") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && (i+1 == len(s) || s[i+1] != '0' && s[i+1] != '1') {
			return false
		}
	}
	return true
}
