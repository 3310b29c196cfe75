package chain

import (
	"slices"
	"strings"
	"sync"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// Facts are what the cross-document stage reads of one boundary document:
// the chain graph, the chain rules, and the OpenAPI and as-built rules
// that read the graph. Like the facts an analyzer of
// golang.org/x/tools/go/analysis exports about a package for the packages
// that import it, they are derived from the typed model once the
// document's own stages are done (FactsOf), so that the document need not
// stay live until its set is checked: a set of tens of thousands of files
// keeps its facts, not its documents. They are the model's values with
// their places, not a second reading of the text; what only the
// per-document rules and conform read (examples, key formats, the
// fingerprint, replay, storage and observability sections, suppressions)
// stays behind with the document.
type Facts struct {
	Path string
	Root boundary.Field
	Kind boundary.Kind

	KindField, From, To, Service, ContractVersion boundary.String
	Operations                                    Operations

	// The lists of names number them in names (see Names).
	CORSAllowedHeaders, HeaderAllowInbound, HeaderAllowOutbound, SetsHeaders Names
	names                                                                    *NameTable

	Idempotency Idempotency
	// Retry and AsBuilt are behind pointers: the documents without
	// http_retry (half of them) or as_built (most) share one empty value
	// each, which nothing writes.
	Retry   *Retry
	AsBuilt *boundary.AsBuiltRefs
	// Policy is the owner policy: the document's own for an adapter, the
	// embedded "adapter" object of a gateway_to_adapter edge, else nil.
	Policy *Policy

	// Places resolve the Pos of every value above: Place, Pointer,
	// Member, Has.
	boundary.Places
}

// Names is a list of names as the chain rules read it: a header list,
// require_key's methods and operations, retry's methods. A rule reports
// the list (add a header to it), never one name of it, so the names keep
// no place of their own, and a set has few distinct names, so a list
// keeps each as its number in the set's NameTable: 4 bytes a name rather
// than a string's 16 and the model's 32 (with its place). Facts.Allows,
// Facts.ListsFold and Facts.Lists read a list.
type Names struct {
	boundary.Field
	ids []uint32 // the items in order, notAName for an item that is not a string
}

// notAName numbers an item of a list that is not a string.
const notAName = ^uint32(0)

// Len is the number of items of the list, strings or not.
func (n Names) Len() int { return len(n.ids) }

// NameTable numbers the names of the lists of the facts derived with it
// (FactsWith). Facts may be derived from several goroutines at once, and
// are read once all of them are: a check derives a set's facts before
// its cross-document stage.
type NameTable struct {
	mu    sync.Mutex
	ids   map[string]uint32
	names []string // by number
}

// number returns the numbers of the items of l, appended to ids.
func (t *NameTable) number(ids []uint32, l *boundary.StringList) []uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, it := range l.Items {
		if !it.OK() {
			ids = append(ids, notAName)
			continue
		}
		id, ok := t.ids[it.Value]
		if !ok {
			if t.ids == nil {
				t.ids = map[string]uint32{}
			}
			id = uint32(len(t.names))
			t.names = append(t.names, it.Value)
			t.ids[it.Value] = id
		}
		ids = append(ids, id)
	}
	return ids
}

// Settle renumbers the names of t in sorted order, and the lists of
// facts, every fact derived with t, to match. Facts derived from several
// goroutines at once number names in the order the goroutines meet them;
// once settled, the facts of one set of files are the same from run to
// run.
func (t *NameTable) Settle(facts []*Facts) {
	sorted := slices.Clone(t.names)
	slices.Sort(sorted)
	renum := make([]uint32, len(t.names))
	for i, name := range sorted {
		t.ids[name] = uint32(i)
	}
	for old, name := range t.names {
		renum[old] = t.ids[name]
	}
	t.names = sorted
	for _, f := range facts {
		lists, n := f.nameLists()
		for _, l := range lists[:n] {
			for i, id := range l.ids {
				if id != notAName {
					l.ids[i] = renum[id]
				}
			}
		}
	}
}

// nameLists returns f's lists of names, the first n of lists: retry's
// methods last, when f has a retry section of its own.
func (f *Facts) nameLists() (lists [7]*Names, n int) {
	lists = [7]*Names{&f.CORSAllowedHeaders, &f.HeaderAllowInbound, &f.HeaderAllowOutbound, &f.SetsHeaders,
		&f.Idempotency.RequireKey.Methods, &f.Idempotency.RequireKey.Operations, &f.Retry.Methods}
	if f.Retry == &noRetry {
		return lists, len(lists) - 1
	}
	return lists, len(lists)
}

// lists sets the lists of names of f from doc's (f.Retry first). Their
// numbers share one array: an allocation a document rather than one a
// list.
func (f *Facts) lists(doc *boundary.Document) {
	from := [...]*boundary.StringList{&doc.CORSAllowedHeaders, &doc.HeaderAllowInbound, &doc.HeaderAllowOutbound, &doc.SetsHeaders,
		&doc.Idempotency.RequireKey.Methods, &doc.Idempotency.RequireKey.Operations, &doc.Retry.Methods}
	to, lists := f.nameLists()
	n := 0
	for _, l := range from[:lists] {
		n += len(l.Items)
	}
	ids := make([]uint32, 0, n)
	for i, l := range from[:lists] {
		start := len(ids)
		ids = f.names.number(ids, l)
		*to[i] = Names{Field: l.Field, ids: ids[start:len(ids):len(ids)]}
	}
}

// Allows reports whether list, one of f's header lists, lets header
// through: names compare case-insensitively and "*" allows everything.
func (f *Facts) Allows(list Names, header string) bool {
	for _, id := range list.ids {
		if id == notAName {
			continue
		}
		if n := f.names.names[id]; n == "*" || strings.EqualFold(n, header) {
			return true
		}
	}
	return false
}

// ListsFold reports whether list, one of f's lists, holds name,
// case-insensitively.
func (f *Facts) ListsFold(list Names, name string) bool {
	return slices.ContainsFunc(list.ids, func(id uint32) bool { return id != notAName && strings.EqualFold(f.names.names[id], name) })
}

// Lists reports whether list, one of f's lists, holds name.
func (f *Facts) Lists(list Names, name string) bool {
	id, ok := f.names.ids[name]
	return ok && slices.Contains(list.ids, id)
}

// StateChanging reports whether some operation is state-changing: the
// document's schema then requires http_idempotency.
func (f *Facts) StateChanging() bool {
	return slices.ContainsFunc(f.Operations.Items, func(op Operation) bool { return op.StateChanging })
}

// Operations is the "operations" array of a document.
type Operations struct {
	boundary.Field
	Items []Operation
}

// Operation is what chains read of an operation: the key they follow, and
// the method and path its hops judge.
type Operation struct {
	Key, Method, Path boundary.String
	// Pos and State are the operation object's boundary.Field, spelled
	// out so that StateChanging fits beside them: a set keeps an
	// operation of every document, at 80 bytes rather than 88.
	Pos           boundary.Pos
	State         boundary.State
	StateChanging bool
}

// Policy is what the cross-document rules read of an owner policy.
type Policy struct {
	boundary.Field
	Embedded bool // inside a gateway_to_adapter document
	Service  boundary.String
	// Idempotency is the section governing the key: the Idempotency of the
	// same facts (the adapter's own, or for an embedded policy the
	// enclosing edge's).
	Idempotency  *Idempotency
	Scope        boundary.StringList
	ScopeSources boundary.ScopeSources
	Inflight     Inflight
	Conflict     Conflict
}

// The sections below are the model's, cut to the fields the
// cross-document rules read: what only the per-document rules read
// (key_format, the error codes, retry's mode and requires_idempotency_key,
// lease_ms) stays behind with the document.

// Idempotency is what the cross-document rules read of http_idempotency.
type Idempotency struct {
	boundary.Field
	Header, Role  boundary.String
	RequireKey    RequireKey
	OnMissing     OnMissing
	EchoKeyHeader boundary.Bool
}

// OnMissing is what a keyless key-required request gets.
type OnMissing struct {
	Action boundary.String
	Status boundary.Int
}

// KeyHeader is the declared header, or boundary.DefaultKeyHeader.
func (i *Idempotency) KeyHeader() string { return boundary.KeyHeaderOf(i.Header) }

// RequireKey says which requests must carry the key.
type RequireKey struct {
	boundary.Field
	Methods, Operations Names
}

// Retry is what the cross-document rules read of http_retry.
type Retry struct {
	boundary.Field
	Enabled         boundary.Bool
	MaxAttempts     boundary.Int
	Methods         Names
	RetryOn         boundary.RetryOn
	PerTryTimeoutMS boundary.Int
}

// Inflight is what the cross-document rules read of idempotency_inflight.
type Inflight struct {
	Policy                boundary.String
	Status, WaitTimeoutMS boundary.Int
}

// Conflict is what the cross-document rules read of idempotency_conflict.
type Conflict struct {
	OnPayloadMismatch struct{ Status boundary.Int }
}

// FactsOf derives the facts of doc. They share the model's strings and
// lists, so deriving them copies no text.
func FactsOf(doc *boundary.Document) *Facts { return FactsWith(doc, new(NameTable)) }

// FactsWith is FactsOf numbering the names of its lists in names: the
// facts of a set share one NameTable.
func FactsWith(doc *boundary.Document, names *NameTable) *Facts {
	f := &Facts{names: names,
		Path: doc.Path, Root: doc.Root, Kind: doc.Kind,
		KindField: doc.KindField, From: doc.From, To: doc.To, Service: doc.Service, ContractVersion: doc.ContractVersion,
		Operations: Operations{Field: doc.Operations.Field, Items: make([]Operation, len(doc.Operations.Items))},
		Retry:      &noRetry,
		AsBuilt:    &noAsBuilt,
		Places:     doc.Places,
	}
	id, r := &doc.Idempotency, &doc.Retry
	f.Idempotency = Idempotency{Field: id.Field, Header: id.Header, Role: id.Role, RequireKey: RequireKey{Field: id.RequireKey.Field},
		OnMissing: OnMissing{Action: id.OnMissing.Action, Status: id.OnMissing.Status}, EchoKeyHeader: id.EchoKeyHeader}
	if r.Present() {
		f.Retry = &Retry{Field: r.Field, Enabled: r.Enabled, MaxAttempts: r.MaxAttempts,
			RetryOn: r.RetryOn, PerTryTimeoutMS: r.PerTryTimeoutMS}
	}
	f.lists(doc)
	if doc.AsBuilt.Present() {
		f.AsBuilt = &boundary.AsBuiltRefs{Field: doc.AsBuilt.Field, Items: doc.AsBuilt.Items}
	}
	for i, op := range doc.Operations.Items {
		f.Operations.Items[i] = Operation{Pos: op.Pos, State: op.State, Key: op.Key, Method: op.Method, Path: op.Path, StateChanging: op.StateChanging}
	}
	if p := doc.Policy; p != nil {
		f.Policy = &Policy{Field: p.Field, Embedded: p.Embedded, Service: p.Service, Idempotency: &f.Idempotency,
			Scope: p.Scope, ScopeSources: p.ScopeSources,
			Inflight: Inflight{Policy: p.Inflight.Policy, Status: p.Inflight.Status, WaitTimeoutMS: p.Inflight.WaitTimeoutMS}}
		f.Policy.Conflict.OnPayloadMismatch.Status = p.Conflict.OnPayloadMismatch.Status
	}
	return f
}

// noRetry and noAsBuilt are the facts' sections of a document without
// them.
var (
	noRetry   Retry
	noAsBuilt boundary.AsBuiltRefs
)

// FactsOfAll derives the facts of every document of docs, in order.
func FactsOfAll(docs []*boundary.Document) []*Facts {
	out := make([]*Facts, len(docs))
	names := new(NameTable)
	for i, d := range docs {
		out[i] = FactsWith(d, names)
	}
	return out
}

// Requires reports whether op, one of f's operations, must carry the key
// under f's http_idempotency.
func (f *Facts) Requires(op *Operation) bool {
	r := &f.Idempotency.RequireKey
	return f.Idempotency.OK() && r.OK() && (f.ListsFold(r.Methods, op.Method.Value) || op.Key.OK() && f.Lists(r.Operations, op.Key.Value))
}

// CutPlaces cuts the facts' place table to the values they hold (see
// boundary.Places.Cut): a document places every value it decodes, and
// the facts hold about half of them. Has then answers only for those, so
// the caller cuts only the facts of a document that fold (IDL002's typo
// folding, the only caller of Has) cannot ask about. The facts share the
// model's lists (the scope, retry_on, as_built), and the cut
// renumbers their values where they are rather than in copies: the caller
// cuts the facts of a document it drops, which no one reads again.
func (f *Facts) CutPlaces() {
	id, r, p := &f.Idempotency, f.Retry, f.Policy
	var scope []boundary.String
	if p != nil {
		scope = p.Scope.Items
	}
	var buf [128]*boundary.Pos
	pos := append(buf[:0], &f.Root.Pos, &f.KindField.Pos, &f.From.Pos, &f.To.Pos, &f.Service.Pos, &f.ContractVersion.Pos,
		&f.Operations.Pos, &f.CORSAllowedHeaders.Pos, &f.HeaderAllowInbound.Pos, &f.HeaderAllowOutbound.Pos, &f.SetsHeaders.Pos,
		&id.Pos, &id.Header.Pos, &id.Role.Pos, &id.RequireKey.Pos, &id.RequireKey.Methods.Pos, &id.RequireKey.Operations.Pos,
		&id.OnMissing.Action.Pos, &id.OnMissing.Status.Pos, &id.EchoKeyHeader.Pos,
		&r.Pos, &r.Enabled.Pos, &r.MaxAttempts.Pos, &r.Methods.Pos, &r.RetryOn.Pos, &r.PerTryTimeoutMS.Pos, &f.AsBuilt.Pos)
	for i := range f.Operations.Items {
		op := &f.Operations.Items[i]
		pos = append(pos, &op.Pos, &op.Key.Pos, &op.Method.Pos, &op.Path.Pos)
	}
	for i := range scope {
		pos = append(pos, &scope[i].Pos)
	}
	for i := range r.RetryOn.Items {
		pos = append(pos, &r.RetryOn.Items[i].Pos)
	}
	for i := range f.AsBuilt.Items {
		ref := &f.AsBuilt.Items[i]
		pos = append(pos, &ref.Pos, &ref.Kind.Pos, &ref.Name.Pos, &ref.Namespace.Pos)
	}
	if p != nil {
		pos = append(pos, &p.Pos, &p.Service.Pos, &p.Scope.Pos, &p.ScopeSources.Pos, &p.ScopeSources.Tenant.Pos,
			&p.ScopeSources.Actor.Pos, &p.Inflight.Policy.Pos, &p.Inflight.Status.Pos, &p.Inflight.WaitTimeoutMS.Pos,
			&p.Conflict.OnPayloadMismatch.Status.Pos)
	}
	f.Places = f.Cut(pos)
}
