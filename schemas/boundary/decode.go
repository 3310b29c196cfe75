package boundary

import (
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/idemlint/idemlint/schemas/jsontree"
)

// Parse parses and decodes one file. The tree is returned for the stages
// that read the document as written (the schema check); the document
// keeps none of it. Both are nil when the source is not a JSON object at
// all; problems are the IDL001 findings either way.
func Parse(path string, src []byte) (*Document, *jsontree.Node, []jsontree.Problem) {
	text := string(src)
	root, problems := jsontree.Parse(text)
	if root == nil {
		return nil, nil, problems
	}
	return Decode(path, text, root), root, problems
}

// Decode builds the typed document from the parsed top-level object of
// src. Strings are copied, so the document does not keep src alive.
func Decode(path, src string, root *jsontree.Node) *Document {
	return DecodeShared(path, src, root, nil)
}

// DecodeShared is Decode keeping in shared, when not nil, the strings
// the document holds, so that the documents decoded with the same shared
// table hold one copy of each string they repeat.
func DecodeShared(path, src string, root *jsontree.Node, shared *Strings) *Document {
	dec := decoders.Get().(*decoder)
	defer dec.release()
	dec.src, dec.shared = src, shared
	if shared != nil {
		if g := shared.generation(); dec.recent == nil || dec.recent.of != g {
			dec.recent = &recentStrings{of: g}
		}
	}
	dec.places = append(dec.places, place{}) // Pos 0 names no place
	dec.index()
	doc := &Document{Path: path}
	doc.Root = Field{Pos: dec.at(root, NoPos, "", -1), State: Valid}
	dec.document(doc, root)
	doc.places = slices.Clone(dec.places) // exactly sized: a set keeps every document's
	if dec.names != nil || dec.wide != nil {
		doc.extra = &extra{names: dec.names, wide: dec.wide}
	}
	return doc
}

// decoders keep the scratch of the line index and the place table from
// one document to the next: a check decodes thousands.
var decoders = sync.Pool{New: func() any { return new(decoder) }}

// release empties d and returns it to the pool, unless a large document
// grew its scratch beyond what is worth keeping.
func (d *decoder) release() {
	if cap(d.lines) > 1<<16 || cap(d.places) > 1<<16 {
		return
	}
	*d = decoder{lines: d.lines[:0], places: d.places[:0], recent: d.recent}
	decoders.Put(d)
}

// decoder records a place for every value it decodes.
type decoder struct {
	src    string
	lines  []int32 // byte offset of the start of each line
	line   int     // index in lines of the last place's line
	ascii  bool    // no multi-byte characters: columns are byte distances
	places []place
	wide   []wide   // places that do not pack (see place)
	names  []string // member names beyond memberNames (see wide.ref)
	shared *Strings // nil: strings are copied into each document
	recent *recentStrings
}

// recentStrings are the copies in one Strings that a decoder was handed
// last, by a few bits of their hash: the header names every document
// lists and the keys and paths of the flow it reads come back document
// after document, and reading this is cheaper than the table's lock and
// its map, whose slots the collector and the other workers keep out of
// the cache. They name the table by its generation, not a pointer: a
// decoder waiting in the pool must not keep a run's table alive.
type recentStrings struct {
	of     uint64
	copies [512]string
}

func (d *decoder) index() {
	d.lines = append(slices.Grow(d.lines, strings.Count(d.src, "\n")+1), 0)
	for i := 0; ; {
		j := strings.IndexByte(d.src[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		d.lines = append(d.lines, int32(i))
	}
	d.ascii = true
	for i := 0; i < len(d.src); i++ {
		if d.src[i] >= utf8.RuneSelf {
			d.ascii = false
			break
		}
	}
}

// at records the place of n, a member name (index -1) or item index of
// the value at parent.
func (d *decoder) at(n *jsontree.Node, parent Pos, name string, index int) Pos {
	return d.atOffset(n.Offset, parent, name, index)
}

// atOffset is at for the byte at off, such as a member's key.
func (d *decoder) atOffset(off int, parent Pos, name string, index int) Pos {
	line, col := d.lineCol(off)
	ref := int32(index)
	if index < 0 {
		i, known := memberIndex[name]
		if !known {
			i = int32(len(memberNames) + len(d.names))
			d.names = append(d.names, name)
		}
		ref = -i - 1
	}
	self := Pos(len(d.places))
	w := wide{line: int32(line), col: int32(col), parent: parent, ref: ref}
	pl, ok := w.pack(self)
	if !ok {
		pl = place{link: uint32(len(d.wide))}
		d.wide = append(d.wide, w)
	}
	d.places = append(d.places, pl)
	return self
}

// lineCol returns the 1-based line and column of the byte at off.
func (d *decoder) lineCol(off int) (line, col int) {
	off = max(0, min(off, len(d.src)))
	// The decoder reads a document mostly front to back: try the line of
	// the last place before searching.
	l := d.line
	if int(d.lines[l]) > off || l+1 < len(d.lines) && int(d.lines[l+1]) <= off {
		l = sort.Search(len(d.lines), func(i int) bool { return int(d.lines[i]) > off }) - 1
		d.line = l
	}
	col = off - int(d.lines[l])
	if !d.ascii {
		col = utf8.RuneCountInString(d.src[d.lines[l]:off])
	}
	return l + 1, col + 1
}

// field returns the member name of obj (at parent) and its Field: Valid
// when it has kind, else Invalid; Absent with a nil node when obj lacks it.
func (d *decoder) field(obj *jsontree.Node, parent Pos, name string, kind jsontree.Kind) (Field, *jsontree.Node) {
	n := obj.Get(name)
	if n == nil {
		return Field{}, nil
	}
	f := Field{Pos: d.at(n, parent, name, -1), State: Invalid}
	if n.Kind == kind {
		f.State = Valid
	}
	return f, n
}

func (d *decoder) object(obj *jsontree.Node, parent Pos, name string) (Field, *jsontree.Node) {
	f, n := d.field(obj, parent, name, jsontree.Object)
	if !f.OK() {
		return f, nil
	}
	return f, n
}

func (d *decoder) str(obj *jsontree.Node, parent Pos, name string) String {
	f, n := d.field(obj, parent, name, jsontree.String)
	s := String{Field: f}
	if f.OK() {
		s.Value = d.intern(n.Text)
	}
	return s
}

func (d *decoder) integer(obj *jsontree.Node, parent Pos, name string) Int {
	f, n := d.field(obj, parent, name, jsontree.Number)
	i := Int{Field: f}
	if f.OK() {
		v, ok := n.Int()
		if !ok {
			i.State = Invalid
		}
		i.Value = v
	}
	return i
}

func (d *decoder) boolean(obj *jsontree.Node, parent Pos, name string) Bool {
	f, n := d.field(obj, parent, name, jsontree.Bool)
	b := Bool{Field: f}
	if f.OK() {
		b.Value = n.True
	}
	return b
}

func (d *decoder) strings(obj *jsontree.Node, parent Pos, name string) StringList {
	f, n := d.field(obj, parent, name, jsontree.Array)
	l := StringList{Field: f}
	if !f.OK() {
		return l
	}
	l.Items = make([]String, len(n.Items))
	for i, it := range n.Items {
		l.Items[i].Pos = d.at(it, f.Pos, "", i)
		l.Items[i].State = Invalid
		if it.Kind == jsontree.String {
			l.Items[i].State = Valid
			l.Items[i].Value = d.intern(it.Text)
		}
	}
	return l
}

// vocabulary holds the values documents repeat (kinds, methods, roles,
// enum values, the default headers): decoding one returns the shared
// string instead of a copy.
var vocabulary = func() map[string]string {
	words := []string{
		SpecVersion, "browser_to_bff", "bff_to_gateway", "gateway_to_adapter", "adapter",
		"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE",
		"owner", "validate_only", "passthrough", "none", "reject", "wait",
		"canonical_json", "canonical_form", "raw_bytes", "application/json", "application/x-www-form-urlencoded", "*/*", "sha256", "sha512", "method", "path", "query", "body",
		"stored_response", "reexecute", "default", "billing", "irreversible",
		"memory", "redis", "postgres", "24h", "7d", "14d", "30d",
		"service", "operation_key", "contract_version", "tenant_id", "actor_id", "fingerprint", "idempotency_key",
		"connect_error", "timeout", "429", "500", "502", "503", "504",
		DefaultKeyHeader, "content-type", "authorization", "x-request-id", "x-tenant-id", "x-actor-id",
		"header:x-tenant-id", "header:x-actor-id", "idempotency-key",
		"idempotency_key_required", "idempotency_key_reused", "idempotent-replayed",
	}
	m := make(map[string]string, len(words))
	for _, w := range words {
		m[w] = w
	}
	return m
}()

// intern returns s, sharing a vocabulary word or the copy in the
// decoder's Strings, or else copied, so that no decoded string keeps the
// source text alive.
func (d *decoder) intern(s string) string {
	if w, ok := vocabulary[s]; ok {
		return w
	}
	if d.shared == nil {
		return strings.Clone(s)
	}
	h := maphash.String(stringsSeed, s)
	r := &d.recent.copies[h%uint64(len(d.recent.copies))]
	if *r != s {
		*r = d.shared.intern(s, h)
	}
	return *r
}

// Strings holds one copy of every string the documents decoded with it
// (DecodeShared) hold beyond the vocabulary: the component ids, operation
// keys, paths and header names that the documents of a set repeat from
// hop to hop, so that a set's facts keep one copy of each however many
// documents repeat it (docs/performance.md, One copy of each string). The
// standard library's unique package
// keeps a string only while a Handle to it lives, and documents hold
// strings, not handles. A Strings is safe for concurrent use; drop it once
// the documents are decoded.
type Strings struct {
	once sync.Once
	gen  uint64 // tells this table from the others (recentStrings)
	// The copies are keyed by their hash, 24 bytes a table slot rather
	// than a string key's 32: a set has some hundred thousand distinct
	// strings. Of two strings with one hash, the second is not shared.
	shards [64]struct {
		sync.Mutex
		m map[uint64]string
	}
}

var (
	stringsSeed = maphash.MakeSeed()
	stringsGens atomic.Uint64
)

func (t *Strings) generation() uint64 {
	t.once.Do(func() { t.gen = stringsGens.Add(1) })
	return t.gen
}

// intern returns the held copy of s, whose hash is h, copying s when
// none is held yet.
func (t *Strings) intern(s string, h uint64) string {
	sh := &t.shards[h%uint64(len(t.shards))]
	sh.Lock()
	w, ok := sh.m[h]
	if !ok {
		if sh.m == nil {
			sh.m = map[uint64]string{}
		}
		w = strings.Clone(s)
		sh.m[h] = w
	}
	sh.Unlock()
	if w != s {
		return strings.Clone(s)
	}
	return w
}

func (d *decoder) document(doc *Document, root *jsontree.Node) {
	top := doc.Root.Pos
	doc.Boundary = root.Get("spec_version") != nil || root.Get("boundary") != nil
	if bad := nonconforming(root); bad != nil {
		line, col := d.lineCol(bad.Offset)
		doc.Nonconforming = &Place{Line: line, Column: col, Pointer: bad.Pointer()}
	}
	doc.KindField = d.str(root, top, "boundary")
	if k := Kind(doc.KindField.Value); isKind(k) {
		doc.Kind = k
	}
	doc.From = d.str(root, top, "from")
	doc.To = d.str(root, top, "to")
	doc.Service = d.str(root, top, "service")
	doc.ContractVersion = d.str(root, top, "contract_version")
	doc.Operations = d.operations(root, top)
	doc.CORSAllowedHeaders = d.strings(root, top, "cors_allowed_headers")
	doc.HeaderAllowInbound = d.strings(root, top, "header_to_allow_inbound")
	doc.HeaderAllowOutbound = d.strings(root, top, "header_to_allow_outbound")
	doc.SetsHeaders = d.strings(root, top, "sets_headers")
	doc.Idempotency = d.idempotency(root, top)
	doc.Retry = d.retry(root, top)
	doc.AsBuilt = d.asBuilt(root, top)
	switch doc.Kind {
	case Adapter:
		doc.Policy = d.policy(root, doc.Root)
		doc.Policy.Service = doc.Service
	case GatewayToAdapter:
		if f, emb := d.object(root, top, "adapter"); emb != nil {
			doc.Policy = d.policy(emb, f)
			doc.Policy.Embedded = true
			doc.Policy.Service = d.str(emb, f.Pos, "service")
		}
	}
	if p := doc.Policy; p != nil {
		p.Idempotency = &doc.Idempotency
		p.ContractVersion = doc.ContractVersion
		p.Operations = &doc.Operations
	}
	doc.Suppressions = d.suppressions(root, top)
}

func isKind(k Kind) bool {
	for _, known := range Kinds {
		if k == known {
			return true
		}
	}
	return false
}

// IsToken reports whether s is an RFC 9110 token, as every header name
// must be: one or more of the letters, digits and !#$%&'*+-.^_`|~.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// StateChangingByDefault reports whether a method changes state unless an
// operation says otherwise.
func StateChangingByDefault(method string) bool {
	switch method {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}

func (d *decoder) operations(root *jsontree.Node, top Pos) Operations {
	f, n := d.field(root, top, "operations", jsontree.Array)
	ops := Operations{Field: f}
	if !f.OK() {
		return ops
	}
	ops.Items = make([]Operation, 0, len(n.Items))
	for i, it := range n.Items {
		if it.Kind != jsontree.Object {
			continue // the schema reports it
		}
		at := d.at(it, f.Pos, "", i)
		op := Operation{
			Field:  Field{Pos: at, State: Valid},
			Key:    d.str(it, at, "operation_key"),
			Method: d.str(it, at, "method"),
			Path:   d.str(it, at, "path"),
		}
		op.StateChanging = StateChangingByDefault(op.Method.Value)
		if sc := d.boolean(it, at, "state_changing"); sc.OK() {
			op.StateChanging = sc.Value
		}
		if ef, ex := d.object(it, at, "example"); ex != nil {
			op.Example = &Example{Field: ef}
			if body := ex.Get("body"); body != nil {
				op.Example.BodyJSON = string(body.AppendJSON(nil))
			}
			if hf, hs := d.object(ex, ef.Pos, "headers"); hs != nil {
				if len(hs.Members) > 0 {
					op.Example.Headers = make([]ExampleHeader, 0, len(hs.Members))
				}
				for _, m := range hs.Members {
					name := d.intern(m.Key)
					if !IsToken(name) {
						op.Example.BadHeaderNames = append(op.Example.BadHeaderNames, UnknownMember{Pos: d.atOffset(m.KeyOffset, hf.Pos, name, -1), Name: name})
					}
					if m.Value.Kind == jsontree.String {
						op.Example.Headers = append(op.Example.Headers, ExampleHeader{Name: name, Value: d.intern(m.Value.Text)})
					}
				}
			}
		}
		ops.Items = append(ops.Items, op)
	}
	return ops
}

func (d *decoder) idempotency(root *jsontree.Node, top Pos) HTTPIdempotency {
	f, n := d.object(root, top, "http_idempotency")
	h := HTTPIdempotency{Field: f}
	if n == nil {
		return h
	}
	at := f.Pos
	h.Header = d.str(n, at, "header")
	h.Role = d.str(n, at, "role")
	h.EchoKeyHeader = d.boolean(n, at, "echo_key_header")
	var o *jsontree.Node
	if h.RequireKey.Field, o = d.object(n, at, "require_key"); o != nil {
		h.RequireKey.Methods, h.RequireKey.Operations = d.strings(o, h.RequireKey.Pos, "methods"), d.strings(o, h.RequireKey.Pos, "operations")
	}
	if h.OnMissing.Field, o = d.object(n, at, "on_missing"); o != nil {
		m, in := &h.OnMissing, h.OnMissing.Pos
		m.Action, m.Status, m.ErrorCode = d.str(o, in, "action"), d.integer(o, in, "status"), d.str(o, in, "error_code")
	}
	if h.KeyFormat.Field, o = d.object(n, at, "key_format"); o != nil {
		h.KeyFormat.MaxLength, h.KeyFormat.Pattern = d.integer(o, h.KeyFormat.Pos, "max_length"), d.str(o, h.KeyFormat.Pos, "pattern")
	}
	return h
}

func (d *decoder) retry(root *jsontree.Node, top Pos) HTTPRetry {
	f, n := d.object(root, top, "http_retry")
	r := HTTPRetry{Field: f}
	if n == nil {
		return r
	}
	at := f.Pos
	r.Enabled = d.boolean(n, at, "enabled")
	r.MaxAttempts = d.integer(n, at, "max_attempts")
	r.RequiresIdempotencyKey = d.boolean(n, at, "requires_idempotency_key")
	r.Mode = d.str(n, at, "mode")
	r.Methods = d.strings(n, at, "methods")
	r.PerTryTimeoutMS = d.integer(n, at, "per_try_timeout_ms")
	of, on := d.field(n, at, "retry_on", jsontree.Array)
	r.RetryOn.Field = of
	if !of.OK() {
		return r
	}
	for i, it := range on.Items {
		t := RetryTrigger{Field: Field{Pos: d.at(it, of.Pos, "", i), State: Invalid}}
		switch it.Kind {
		case jsontree.String:
			t.State, t.Name, t.Quoted = Valid, d.intern(it.Text), true
			// Most triggers are words: only a number is worth Atoi,
			// whose error on a word is an allocation.
			if isInteger(it.Text) {
				if code, err := strconv.Atoi(it.Text); err == nil {
					t.Status = code
				}
			}
		case jsontree.Number:
			if code, ok := it.Int(); ok && code >= 0 && code < int64(len(codeNames)) {
				t.State, t.Name, t.Status = Valid, codeNames[code], int(code)
			}
		}
		r.RetryOn.Items = append(r.RetryOn.Items, t)
	}
	return r
}

func (d *decoder) asBuilt(root *jsontree.Node, top Pos) AsBuiltRefs {
	f, n := d.field(root, top, "as_built", jsontree.Array)
	refs := AsBuiltRefs{Field: f}
	if !f.OK() {
		return refs
	}
	for i, it := range n.Items {
		if it.Kind != jsontree.Object {
			continue
		}
		at := d.at(it, f.Pos, "", i)
		refs.Items = append(refs.Items, AsBuiltRef{Field: Field{Pos: at, State: Valid},
			Kind: d.str(it, at, "kind"), Name: d.str(it, at, "name"), Namespace: d.str(it, at, "namespace")})
	}
	return refs
}

// codeNames are the decimal names of the numbers a retry_on entry may
// hold, made once rather than for every entry of every document.
var codeNames = func() (names [1000]string) {
	for i := range names {
		names[i] = strconv.Itoa(i)
	}
	return names
}()

// isInteger reports whether s is a sign and decimal digits, as Atoi reads.
func isInteger(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (d *decoder) policy(n *jsontree.Node, self Field) *Policy {
	at := self.Pos
	p := &Policy{Field: self, Scope: d.strings(n, at, "idempotency_scope")}
	// Each section keeps its Field whatever it holds; its members are read
	// only when it is an object.
	var o *jsontree.Node
	if p.ScopeSources.Field, o = d.object(n, at, "scope_sources"); o != nil {
		in := p.ScopeSources.Pos
		p.ScopeSources.Tenant, p.ScopeSources.Actor = d.str(o, in, "tenant_id"), d.str(o, in, "actor_id")
	}
	if p.Fingerprint.Field, o = d.object(n, at, "idempotency_fingerprint"); o != nil {
		f, in := &p.Fingerprint, p.Fingerprint.Pos
		f.Canonicalization, f.Inputs = d.canonicalization(o, in), d.strings(o, in, "inputs")
		f.Algorithm, f.ExcludeFields = d.str(o, in, "algorithm"), d.strings(o, in, "exclude_fields")
	}
	if p.Replay.Field, o = d.object(n, at, "idempotency_replay"); o != nil {
		r, in := &p.Replay, p.Replay.Pos
		r.OnCompleted, r.OnFailed = d.str(o, in, "on_completed"), d.str(o, in, "on_failed")
		r.SameStatus, r.SameBody = d.boolean(o, in, "same_status"), d.boolean(o, in, "same_body")
		r.ReplayedHeader = d.str(o, in, "replayed_header")
	}
	if p.Inflight.Field, o = d.object(n, at, "idempotency_inflight"); o != nil {
		i, in := &p.Inflight, p.Inflight.Pos
		i.Policy, i.Status = d.str(o, in, "policy"), d.integer(o, in, "status")
		i.WaitTimeoutMS, i.LeaseMS = d.integer(o, in, "wait_timeout_ms"), d.integer(o, in, "lease_ms")
	}
	if p.Conflict.Field, o = d.object(n, at, "idempotency_conflict"); o != nil {
		m := &p.Conflict.OnPayloadMismatch
		if m.Field, o = d.object(o, p.Conflict.Pos, "on_payload_mismatch"); o != nil {
			m.Status, m.ErrorCode = d.integer(o, m.Pos, "status"), d.str(o, m.Pos, "error_code")
		}
	}
	if p.Storage.Field, o = d.object(n, at, "idempotency_storage"); o != nil {
		s, in := &p.Storage, p.Storage.Pos
		s.Tier, s.TTL = d.str(o, in, "tier"), d.str(o, in, "ttl")
		s.Backend, s.MaxRecords = d.str(o, in, "backend"), d.integer(o, in, "max_records")
		s.MaxBytes, s.MaxTenantPercent = d.integer(o, in, "max_bytes"), d.integer(o, in, "max_tenant_percent")
		red := &s.TTLReduction
		if red.Field, o = d.object(o, in, "ttl_reduction"); o != nil {
			red.Declared, red.Reason = d.boolean(o, red.Pos, "declared"), d.str(o, red.Pos, "reason")
		}
	}
	if p.Observe.Field, o = d.object(n, at, "observability"); o != nil {
		p.Observe.LogFields, p.Observe.RequestIDHeader = d.strings(o, p.Observe.Pos, "log_fields"), d.str(o, p.Observe.Pos, "request_id_header")
	}
	return p
}

func (d *decoder) canonicalization(obj *jsontree.Node, parent Pos) Canonicalization {
	n := obj.Get("canonicalization")
	if n == nil {
		return Canonicalization{}
	}
	c := Canonicalization{Field: Field{Pos: d.at(n, parent, "canonicalization", -1), State: Valid}}
	switch n.Kind {
	case jsontree.String:
		c.Value = d.intern(n.Text)
	case jsontree.Object:
		c.ByMediaType = make([]MediaCanonicalization, len(n.Members))
		for i, m := range n.Members {
			mt := d.intern(m.Key)
			e := MediaCanonicalization{MediaType: mt, Name: String{Field: Field{Pos: d.at(m.Value, c.Pos, mt, -1), State: Invalid}}}
			if m.Value.Kind == jsontree.String {
				e.Name.State, e.Name.Value = Valid, d.intern(m.Value.Text)
			}
			c.ByMediaType[i] = e
		}
	default:
		c.State = Invalid
	}
	return c
}

// SuppressionField is the top-level member holding suppressions.
const SuppressionField = "x-idemlint-ignore"

func (d *decoder) suppressions(root *jsontree.Node, top Pos) *Suppressions {
	n := root.Get(SuppressionField)
	if n == nil {
		return nil
	}
	s := &Suppressions{Field: Field{Pos: d.at(n, top, SuppressionField, -1), State: Invalid}, Kind: n.Kind}
	if n.Kind != jsontree.Array {
		return s
	}
	s.State = Valid
	for i, it := range n.Items {
		e := SuppressionEntry{Field: Field{Pos: d.at(it, s.Pos, "", i), State: Invalid}, Kind: it.Kind}
		if it.Kind == jsontree.Object {
			e.State = Valid
			e.Rule = d.str(it, e.Pos, "rule")
			e.Reason = d.str(it, e.Pos, "reason")
			if r := it.Get("rule"); r != nil {
				e.RuleKind = r.Kind
			}
			if r := it.Get("reason"); r != nil {
				e.ReasonKind = r.Kind
			}
			for _, m := range it.Members {
				if m.Key != "rule" && m.Key != "reason" {
					name := d.intern(m.Key)
					e.Unknown = append(e.Unknown, UnknownMember{Pos: d.at(m.Value, e.Pos, name, -1), Name: name})
				}
			}
		}
		s.Entries = append(s.Entries, e)
	}
	return s
}

// ttlUnits are the units of a retention duration by their letter.
var ttlUnits = [256]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}

// MaxTTL is the longest retention a policy may declare (docs/format.md,
// Bounds: one verdict for a policy).
const MaxTTL = 3650 * 24 * time.Hour

// ParseTTL parses a retention duration: an integer and one of the units s,
// m, h, d (24h) or w (7d), e.g. "24h" or "14d".
func ParseTTL(s string) (time.Duration, error) {
	if len(s) < 2 {
		return 0, fmt.Errorf("ttl %q is not an integer followed by s, m, h, d or w", s)
	}
	unit := ttlUnits[s[len(s)-1]]
	if unit == 0 || !isInteger(s[:len(s)-1]) {
		return 0, fmt.Errorf("ttl %q is not an integer followed by s, m, h, d or w", s)
	}
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if err != nil || n < 0 || n > int64(math.MaxInt64/unit) {
		return 0, fmt.Errorf("ttl %q is not an integer followed by s, m, h, d or w", s)
	}
	return time.Duration(n) * unit, nil
}
