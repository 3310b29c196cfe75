// Package boundary is the typed model of a boundary document
// (docs/format.md, Top-level fields), decoded once from a jsontree and read by every consumer: the lint
// rules, the chain graph, the reference engine and conform.
//
// Every value carries its presence, validity and place (see Field), so a
// rule tells "missing" from "of the wrong type" (which the schema check
// reports) and points at the exact value without a parse tree: the model
// keeps no tree and no source text, only what it decoded.
package boundary

import (
	"strings"

	"github.com/idemlint/idemlint/schemas/jsontree"
)

// Kind is the value of a document's "boundary" field.
type Kind string

// The boundary kinds, in chain order.
const (
	BrowserToBFF     Kind = "browser_to_bff"
	BFFToGateway     Kind = "bff_to_gateway"
	GatewayToAdapter Kind = "gateway_to_adapter"
	Adapter          Kind = "adapter"
)

// Kinds lists the boundary kinds in chain order.
var Kinds = []Kind{BrowserToBFF, BFFToGateway, GatewayToAdapter, Adapter}

// IsEdge reports whether documents of kind k describe a hop between two
// components (and so have from and to).
func (k Kind) IsEdge() bool {
	return k == BrowserToBFF || k == BFFToGateway || k == GatewayToAdapter
}

// DefaultKeyHeader is the key header when http_idempotency names none.
const DefaultKeyHeader = "x-idempotency-key"

// SpecVersion is the only supported spec_version.
const SpecVersion = "idemlint.boundary/v1"

// Document is one decoded boundary document.
type Document struct {
	Path string // file path as shown in findings
	// Root is the top-level object; its Pos resolves to 1:1.
	Root Field
	// Boundary is true when the object has spec_version or boundary: an
	// object with neither (a package.json) is not a boundary document.
	Boundary bool
	// Nonconforming is where the document first departs from the JSON
	// Schema of its kind (shape.go); nil when it conforms, so that IDL002's
	// schema stage would find nothing.
	Nonconforming *Place

	Kind            Kind   // "" when missing or not one of Kinds
	KindField       String // the "boundary" member as written
	From, To        String
	Service         String
	ContractVersion String
	Operations      Operations

	CORSAllowedHeaders  StringList
	HeaderAllowInbound  StringList
	HeaderAllowOutbound StringList
	// SetsHeaders are the headers an edge's sending side adds on its
	// outbound side (docs/format.md, Scope headers: tenant and actor): where
	// a scope header may start.
	SetsHeaders StringList

	Idempotency HTTPIdempotency
	Retry       HTTPRetry
	// AsBuilt is the as_built array of an edge (docs/as-built.md, Binding
	// resources to hops): the resources
	// that realise the hop. Entries that are not objects are left out.
	AsBuilt AsBuiltRefs

	// Policy is the owner policy: the document itself for an adapter, the
	// embedded "adapter" object of a gateway_to_adapter edge, else nil.
	Policy *Policy

	// Suppressions is the x-idemlint-ignore member, read by the runner;
	// nil when absent (most documents), so it costs them one word.
	Suppressions *Suppressions

	// Places resolve the document's Pos values: Place, Pointer, Member.
	Places
}

// Operations is the "operations" array; items that are not objects are
// left out (the schema reports them); an Operation's place names its index.
type Operations struct {
	Field
	Items []Operation
}

// StateChanging reports whether some operation is state-changing; the
// document's schema then requires http_idempotency, so rules need not ask
// for it.
func (o *Operations) StateChanging() bool {
	for _, op := range o.Items {
		if op.StateChanging {
			return true
		}
	}
	return false
}

// Operation is one entry of "operations".
type Operation struct {
	Field
	Key           String
	Method        String
	Path          String
	StateChanging bool // explicit state_changing, else the method's default
	Example       *Example
}

// Example is an operation's example request, used by conform.
type Example struct {
	Field
	// BodyJSON is the example body as compact JSON, "" when absent: as
	// text it costs a tenth of a tree, and only conform reads it.
	BodyJSON string
	// Headers are the headers with a string value, in the order written: a
	// list, because a map of one or two entries costs several times its
	// strings in every document a set keeps.
	Headers []ExampleHeader
	// BadHeaderNames are the header names that are not RFC 9110 tokens,
	// placed at their keys (IDL002 reports them).
	BadHeaderNames []UnknownMember
}

// ExampleHeader is one header of an example request.
type ExampleHeader struct {
	Name, Value string
}

// Body parses the example body; nil when there is none.
func (e *Example) Body() *jsontree.Node {
	if e == nil || e.BodyJSON == "" {
		return nil
	}
	n, _ := jsontree.ParseValue(e.BodyJSON) // written by the decoder: valid JSON
	return n
}

// HTTPIdempotency is the http_idempotency section.
type HTTPIdempotency struct {
	Field
	Header        String
	Role          String
	RequireKey    RequireKey
	OnMissing     OnMissing
	EchoKeyHeader Bool
	KeyFormat     KeyFormat
}

// KeyHeader is the declared header, or DefaultKeyHeader.
func (h *HTTPIdempotency) KeyHeader() string { return KeyHeaderOf(h.Header) }

// KeyHeaderOf is the key header that http_idempotency's header field
// names: its value, or DefaultKeyHeader.
func KeyHeaderOf(header String) string {
	if header.OK() && header.Value != "" {
		return header.Value
	}
	return DefaultKeyHeader
}

// Requires reports whether op must carry the key under this section.
func (h *HTTPIdempotency) Requires(op *Operation) bool { return h.Covers(op.Method, op.Key) }

// Covers reports whether a request with method to the operation whose
// operation_key is key must carry the key under this section.
func (h *HTTPIdempotency) Covers(method, key String) bool {
	return h.OK() && h.RequireKey.Covers(method, key)
}

// RequireKey says which requests must carry the key.
type RequireKey struct {
	Field
	Methods    StringList
	Operations StringList
}

// Covers reports whether a request with method to the operation whose
// operation_key is key must carry the key.
func (r *RequireKey) Covers(method, key String) bool {
	if !r.OK() {
		return false
	}
	for _, m := range r.Methods.Items {
		if m.OK() && strings.EqualFold(m.Value, method.Value) {
			return true
		}
	}
	return r.Operations.Contains(key.Value) && key.OK()
}

// Readable reports whether the coverage of require_key is known: absent,
// or an object whose lists are arrays. Otherwise the schema reports it and
// guessing its meaning would report it twice.
func (r *RequireKey) Readable() bool {
	switch r.State {
	case Absent:
		return true
	case Invalid:
		return false
	}
	return r.Methods.State != Invalid && r.Operations.State != Invalid
}

// OnMissing is what a keyless key-required request gets.
type OnMissing struct {
	Field
	Action    String
	Status    Int
	ErrorCode String
}

// DefaultMaxKeyLength is key_format.max_length when not declared.
const DefaultMaxKeyLength = 255

// KeyFormat is what a valid key looks like.
type KeyFormat struct {
	Field
	MaxLength Int
	Pattern   String
}

// MaxKeyLength is the declared max_length, or DefaultMaxKeyLength.
func (k *KeyFormat) MaxKeyLength() int {
	if k.MaxLength.OK() && k.MaxLength.Value > 0 {
		return int(k.MaxLength.Value)
	}
	return DefaultMaxKeyLength
}

// AsBuiltRefs is the as_built array of an edge.
type AsBuiltRefs struct {
	Field
	Items []AsBuiltRef
}

// AsBuiltRef is one entry of as_built: a resource by kind, name and,
// when written, namespace.
type AsBuiltRef struct {
	Field
	Kind, Name, Namespace String
}

// HTTPRetry is the http_retry section of an edge.
type HTTPRetry struct {
	Field
	Enabled                Bool
	MaxAttempts            Int
	RequiresIdempotencyKey Bool
	Mode                   String
	Methods                StringList
	RetryOn                RetryOn
	PerTryTimeoutMS        Int
}

// RetryOn is the retry_on list.
type RetryOn struct {
	Field
	Items []RetryTrigger
}

// RetryTrigger is one entry of retry_on: a condition name or a status code.
type RetryTrigger struct {
	Field
	Name   string // "connect_error", "timeout", or the status as text
	Status int    // the status code, 0 for a named condition
	Quoted bool   // written as a string, "500" rather than 500
}

// Policy is the adapter's owner policy (docs/format.md, Owner policy).
type Policy struct {
	Field         // the object holding the policy fields
	Embedded bool // inside a gateway_to_adapter document
	Service  String

	// Idempotency is the section governing the key: the adapter's own, or
	// for an embedded policy the enclosing edge's.
	Idempotency     *HTTPIdempotency
	ContractVersion String
	Operations      *Operations

	Scope        StringList
	ScopeSources ScopeSources
	Fingerprint  Fingerprint
	Replay       Replay
	Inflight     Inflight
	Conflict     Conflict
	Storage      Storage
	Observe      Observability
}

// ScopeSources says where tenant and actor come from.
type ScopeSources struct {
	Field
	Tenant String // as written, "header:<name>"
	Actor  String
}

// Default scope source headers.
const (
	DefaultTenantHeader = "x-tenant-id"
	DefaultActorHeader  = "x-actor-id"
)

// TenantHeader is the header the tenant comes from.
func (s *ScopeSources) TenantHeader() string { return sourceHeader(s.Tenant, DefaultTenantHeader) }

// ActorHeader is the header the actor comes from.
func (s *ScopeSources) ActorHeader() string { return sourceHeader(s.Actor, DefaultActorHeader) }

func sourceHeader(s String, def string) string {
	if h, ok := strings.CutPrefix(s.Value, "header:"); s.OK() && ok && h != "" {
		return h
	}
	return def
}

// Fingerprint is idempotency_fingerprint.
type Fingerprint struct {
	Field
	Canonicalization Canonicalization
	Inputs           StringList
	Algorithm        String
	ExcludeFields    StringList
}

// Canonicalization is idempotency_fingerprint.canonicalization: one name
// for every body (a string), or one per request media type (an object).
// It is Valid as either; Value is "" unless it is a string.
type Canonicalization struct {
	Field
	Value string
	// ByMediaType are the members of the object form in document order
	// (media types as written); nil for the string form.
	ByMediaType []MediaCanonicalization
}

// MediaCanonicalization is one member of the object form: the
// canonicalization of bodies of one media type ("*/*": any other).
type MediaCanonicalization struct {
	MediaType string
	Name      String
}

// Names are the canonicalization names written: the string, or each
// member's value.
func (c Canonicalization) Names() []String {
	if c.ByMediaType == nil {
		if !c.Present() {
			return nil
		}
		return []String{{Field: c.Field, Value: c.Value}}
	}
	out := make([]String, len(c.ByMediaType))
	for i, m := range c.ByMediaType {
		out[i] = m.Name
	}
	return out
}

// Replay is idempotency_replay.
type Replay struct {
	Field
	OnCompleted    String
	SameStatus     Bool
	SameBody       Bool
	OnFailed       String
	ReplayedHeader String
}

// Inflight is idempotency_inflight.
type Inflight struct {
	Field
	Policy        String
	Status        Int
	WaitTimeoutMS Int
	LeaseMS       Int
}

// DefaultLeaseMS is idempotency_inflight.lease_ms when not declared.
const DefaultLeaseMS = 30000

// Lease is the declared lease_ms, or DefaultLeaseMS.
func (i *Inflight) Lease() int64 {
	if i.LeaseMS.OK() && i.LeaseMS.Value > 0 {
		return i.LeaseMS.Value
	}
	return DefaultLeaseMS
}

// Conflict is idempotency_conflict.
type Conflict struct {
	Field
	OnPayloadMismatch PayloadMismatch
}

// PayloadMismatch is idempotency_conflict.on_payload_mismatch.
type PayloadMismatch struct {
	Field
	Status    Int
	ErrorCode String
}

// Storage is idempotency_storage.
type Storage struct {
	Field
	Tier             String
	TTL              String // as written; see ParseTTL
	TTLReduction     TTLReduction
	Backend          String
	MaxRecords       Int
	MaxBytes         Int
	MaxTenantPercent Int
}

// TTLReduction is idempotency_storage.ttl_reduction.
type TTLReduction struct {
	Field
	Declared Bool
	Reason   String
}

// Reduced reports whether a shorter ttl is declared with a reason.
func (s *Storage) Reduced() bool {
	return s.TTLReduction.Declared.Value && strings.TrimSpace(s.TTLReduction.Reason.Value) != ""
}

// DefaultMaxRecords is idempotency_storage.max_records when not declared.
const DefaultMaxRecords = 1000000

// RecordLimit is the declared max_records, or DefaultMaxRecords.
func (s *Storage) RecordLimit() int64 {
	if s.MaxRecords.OK() && s.MaxRecords.Value > 0 {
		return s.MaxRecords.Value
	}
	return DefaultMaxRecords
}

// DefaultMaxBytes is idempotency_storage.max_bytes when not declared,
// 128 MiB: about a hundred thousand records of 1 KiB responses, where
// max_records alone would let a million records of any size in.
const DefaultMaxBytes = 128 << 20

// ByteLimit is the declared max_bytes, or DefaultMaxBytes.
func (s *Storage) ByteLimit() int64 {
	if s.MaxBytes.OK() && s.MaxBytes.Value > 0 {
		return s.MaxBytes.Value
	}
	return DefaultMaxBytes
}

// DefaultMaxTenantPercent is idempotency_storage.max_tenant_percent when
// not declared: a tenant may hold a quarter of the store, so that one
// tenant filling it cannot refuse every other tenant's new keys.
const DefaultMaxTenantPercent = 25

// TenantPercent is the declared max_tenant_percent, or
// DefaultMaxTenantPercent; 100 means no share.
func (s *Storage) TenantPercent() int {
	if s.MaxTenantPercent.OK() && s.MaxTenantPercent.Value > 0 {
		return int(s.MaxTenantPercent.Value)
	}
	return DefaultMaxTenantPercent
}

// Observability is the observability section.
type Observability struct {
	Field
	LogFields       StringList
	RequestIDHeader String
}

// Suppressions is the x-idemlint-ignore member: a list of entries.
type Suppressions struct {
	Field
	Kind    jsontree.Kind // the JSON type as written, for the message when not an array
	Entries []SuppressionEntry
}

// SuppressionEntry is one item of x-idemlint-ignore.
type SuppressionEntry struct {
	Field
	Kind    jsontree.Kind // the JSON type of the item
	Rule    String
	Reason  String
	Unknown []UnknownMember // members other than rule and reason
	// RuleKind and ReasonKind are the JSON types of rule and reason as
	// written, for messages about a wrong type.
	RuleKind, ReasonKind jsontree.Kind
}

// UnknownMember is a member named in a document, at its place.
type UnknownMember struct {
	Pos  Pos
	Name string
}
