// Package boundary is the typed model of a boundary document (spec section
// 2), decoded once from a jsontree and read by every consumer: the lint
// rules, the chain graph, the reference engine and conform.
//
// Decoding is tolerant: a field of the wrong type decodes as absent, because
// the JSON Schema check reports it, and rules must not report it twice. Each
// section keeps its Node so a rule can point at the exact value.
package boundary

import (
	"strings"

	"github.com/idemlint/idemlint/checks/jsontree"
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

// Document is one parsed boundary document.
type Document struct {
	Path     string             // file path as shown in findings
	Position *jsontree.Position // maps node offsets to line:column
	Root     *jsontree.Node     // the top-level object

	Kind            Kind // "" when missing or not one of Kinds
	From, To        string
	Service         string
	ContractVersion string
	Operations      []Operation

	CORSAllowedHeaders  HeaderList
	HeaderAllowInbound  HeaderList
	HeaderAllowOutbound HeaderList

	Idempotency *HTTPIdempotency // nil when absent
	Retry       *HTTPRetry       // nil when absent

	// Policy is the owner policy: the document itself for an adapter, the
	// embedded "adapter" object of a gateway_to_adapter edge, else nil.
	Policy *Policy

	fields []string // the top-level members present, kept by Release
}

// Has reports whether the document has the top-level member name, whatever
// its type: rules tell "missing" from "the schema reports its type" by it.
func (d *Document) Has(name string) bool {
	for _, f := range d.fields {
		if f == name {
			return true
		}
	}
	return false
}

// Operation is one entry of "operations".
type Operation struct {
	Node          *jsontree.Node
	Index         int // position in the "operations" array
	Key           string
	Method        string
	Path          string
	StateChanging bool // explicit state_changing, else the method's default
	Example       *Example
}

// Example is an operation's example request, used by conform.
type Example struct {
	Node    *jsontree.Node
	Body    *jsontree.Node // nil when absent
	Headers map[string]string
}

// HeaderList is a header allowlist.
type HeaderList struct {
	Node    *jsontree.Node // nil when absent or not an array
	Names   []string
	Present bool // the field exists, whatever its type
	IsList  bool // the field is an array
}

// Allows reports whether the list lets header through: names compare
// case-insensitively and "*" allows everything.
func (h HeaderList) Allows(header string) bool {
	for _, n := range h.Names {
		if n == "*" || strings.EqualFold(n, header) {
			return true
		}
	}
	return false
}

// Find returns the node of the entry naming header (case-insensitively).
func (h HeaderList) Find(header string) *jsontree.Node {
	if h.Node == nil {
		return nil
	}
	for _, it := range h.Node.Items {
		if it.Kind == jsontree.String && strings.EqualFold(it.Text, header) {
			return it
		}
	}
	return nil
}

// HTTPIdempotency is the http_idempotency section.
type HTTPIdempotency struct {
	Node          *jsontree.Node
	fields        []field // the members present, so Release can drop Node
	Header        string  // declared header, or DefaultKeyHeader
	Role          string
	RequireKey    *RequireKey
	OnMissing     *OnMissing
	EchoKeyHeader bool
	KeyFormat     KeyFormat
}

// RequireKey says which requests must carry the key.
type RequireKey struct {
	Node       *jsontree.Node
	Methods    []string
	Operations []string
}

// Requires reports whether op must carry the key.
func (r *RequireKey) Requires(op Operation) bool {
	if r == nil {
		return false
	}
	for _, m := range r.Methods {
		if strings.EqualFold(m, op.Method) {
			return true
		}
	}
	for _, k := range r.Operations {
		if k == op.Key {
			return true
		}
	}
	return false
}

// field is a member of a section as the document wrote it.
type field struct {
	name string
	kind jsontree.Kind
}

// Field returns the JSON type of the member name of http_idempotency, and
// whether it is present at all: rules tell "missing" from "the schema
// reports its type" by it.
func (h *HTTPIdempotency) Field(name string) (jsontree.Kind, bool) {
	for _, f := range h.fields {
		if f.name == name {
			return f.kind, true
		}
	}
	return 0, false
}

// Requires reports whether op must carry the key under this section.
func (h *HTTPIdempotency) Requires(op Operation) bool {
	return h != nil && h.RequireKey.Requires(op)
}

// OnMissing is what a keyless key-required request gets.
type OnMissing struct {
	Node      *jsontree.Node
	Action    string
	Status    int
	ErrorCode string
}

// DefaultMaxKeyLength is key_format.max_length when not declared.
const DefaultMaxKeyLength = 255

// KeyFormat is what a valid key looks like.
type KeyFormat struct {
	Node      *jsontree.Node
	MaxLength int    // DefaultMaxKeyLength when not declared
	Pattern   string // "" when not declared
}

// HTTPRetry is the http_retry section of an edge.
type HTTPRetry struct {
	Node                   *jsontree.Node
	Enabled                bool
	MaxAttempts            int // 0 when not declared
	RequiresIdempotencyKey bool
	Mode                   string
	Methods                []string
	RetryOn                []RetryTrigger
	PerTryTimeoutMS        int
}

// RetryTrigger is one entry of retry_on: a condition name or a status code.
type RetryTrigger struct {
	Node   *jsontree.Node
	Name   string // "connect_error", "timeout", or the status as text
	Status int    // the status code, 0 for a named condition
}

// Policy is the adapter's owner policy (spec 2.4).
type Policy struct {
	Node     *jsontree.Node // object holding the policy fields
	Embedded bool           // inside a gateway_to_adapter document
	Service  string

	// Idempotency is the section governing the key: the adapter's own, or
	// for an embedded policy the enclosing edge's.
	Idempotency     *HTTPIdempotency
	ContractVersion string
	Operations      []Operation

	Scope        []string
	ScopeSources ScopeSources
	Fingerprint  *Fingerprint
	Replay       *Replay
	Inflight     *Inflight
	Conflict     *Conflict
	Storage      *Storage
	Observe      *Observability
}

// ScopeSources says where tenant and actor come from: header names,
// already stripped of their "header:" prefix.
type ScopeSources struct {
	TenantHeader string
	ActorHeader  string
}

// Default scope source headers.
const (
	DefaultTenantHeader = "x-tenant-id"
	DefaultActorHeader  = "x-actor-id"
)

// Fingerprint is idempotency_fingerprint.
type Fingerprint struct {
	Node             *jsontree.Node
	Canonicalization string
	Inputs           []string
	Algorithm        string
	ExcludeFields    []string
}

// Replay is idempotency_replay.
type Replay struct {
	Node           *jsontree.Node
	OnCompleted    string
	SameStatus     bool
	SameBody       bool
	OnFailed       string
	ReplayedHeader string
}

// Inflight is idempotency_inflight.
type Inflight struct {
	Node          *jsontree.Node
	Policy        string
	Status        int
	WaitTimeoutMS int
	LeaseMS       int // DefaultLeaseMS when not declared
}

// DefaultLeaseMS is idempotency_inflight.lease_ms when not declared.
const DefaultLeaseMS = 30000

// DefaultMaxRecords is idempotency_storage.max_records when not declared.
const DefaultMaxRecords = 1000000

// Conflict is idempotency_conflict.on_payload_mismatch.
type Conflict struct {
	Node      *jsontree.Node // the on_payload_mismatch object, nil when absent
	Section   *jsontree.Node // the idempotency_conflict object
	Status    int
	ErrorCode string
}

// Storage is idempotency_storage.
type Storage struct {
	Node    *jsontree.Node
	Tier    string
	TTL     string // as written; see ParseTTL
	Reduced bool   // ttl_reduction.declared with a non-empty reason
	Reason  string
	Backend string
	// MaxRecords caps live records in a memory store; DefaultMaxRecords
	// when not declared.
	MaxRecords int
}

// Observability is the observability section.
type Observability struct {
	Node            *jsontree.Node
	LogFields       []string
	RequestIDHeader string
}

// Release drops the parse tree: every Node of the document becomes nil,
// and what remains is the typed model, presence flags and the source text
// (Position). A checked set keeps all its documents until the chain rules
// have run, and the tree is most of a document's memory; a finding about a
// released document is placed by its JSON Pointer, re-parsing the source.
// A test holds Release to leaving no node reachable.
func (d *Document) Release() {
	d.Root = nil
	for _, l := range []*HeaderList{&d.CORSAllowedHeaders, &d.HeaderAllowInbound, &d.HeaderAllowOutbound} {
		l.Node = nil
	}
	for i := range d.Operations {
		d.Operations[i].Node = nil
		d.Operations[i].Example = nil
	}
	if h := d.Idempotency; h != nil {
		h.Node, h.KeyFormat.Node = nil, nil
		if h.RequireKey != nil {
			h.RequireKey.Node = nil
		}
		if h.OnMissing != nil {
			h.OnMissing.Node = nil
		}
	}
	if r := d.Retry; r != nil {
		r.Node = nil
		for i := range r.RetryOn {
			r.RetryOn[i].Node = nil
		}
	}
	if p := d.Policy; p != nil {
		p.Node = nil
		if p.Fingerprint != nil {
			p.Fingerprint.Node = nil
		}
		if p.Replay != nil {
			p.Replay.Node = nil
		}
		if p.Inflight != nil {
			p.Inflight.Node = nil
		}
		if p.Conflict != nil {
			p.Conflict.Node, p.Conflict.Section = nil, nil
		}
		if p.Storage != nil {
			p.Storage.Node = nil
		}
		if p.Observe != nil {
			p.Observe.Node = nil
		}
	}
}
