package conform

import (
	"net/http"
	"slices"
	"strings"

	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// contract is what the probes read of the policy, taken from the typed
// model in one place (readContract). Conform probes the policy as written,
// lint errors and all, so any section may be missing: each field says
// whether the policy declares it, and a probe that needs what is missing
// skips with the reason.
type contract struct {
	keyHeader    string
	onMissing    refusalSpec // status 0: http_idempotency.on_missing declares none
	echoKey      bool
	maxKeyLength int

	scopeDeclared bool
	scope         []string
	tenantHeader  string
	actorHeader   string

	fingerprint *fingerprintSpec // nil: not declared
	replay      *replaySpec      // nil: not declared
	inflight    *inflightSpec    // nil: not declared
	mismatch    refusalSpec      // status 0: on_payload_mismatch declares none

	operations []operation
}

// refusalSpec is a declared refusal: its status and error_code.
type refusalSpec struct {
	status int
	code   string
}

type fingerprintSpec struct {
	canonicalization string
	// byMediaType is the canonicalization per media type, when declared
	// so ("*/*" for any other); nil otherwise.
	byMediaType map[string]string
	body        bool // the body is one of the inputs
}

// canonicalizationOf is the canonicalization of a body sent with
// contentType: "" when the policy names none for it.
func (f *fingerprintSpec) canonicalizationOf(contentType string) string {
	if f.byMediaType == nil {
		return f.canonicalization
	}
	if c, ok := f.byMediaType[mediaType(contentType)]; ok {
		return c
	}
	return f.byMediaType["*/*"]
}

// mediaType is a Content-Type's type/subtype, in lower case.
func mediaType(contentType string) string {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

type replaySpec struct {
	storedResponse bool // on_completed: stored_response
	sameStatus     bool
	sameBody       bool
	header         string // replayed_header, "" when none
}

type inflightSpec struct {
	policy        string // wait or reject
	status        int
	waitTimeoutMS int
}

// operation is a declared operation as conform probes it.
type operation struct {
	Key, Method, Path string
	StateChanging     bool
	RequiresKey       bool
	// body is the example body as declared, nil when there is none.
	body *jsontree.Node
	// header holds the example's headers and a JSON Content-Type, without
	// those conform sets itself (filled by Runner.newOperation).
	header http.Header
	// base is the object probes extend: the example body (or Config.Body),
	// or {} when there is none or it is not an object (see bodyNote).
	base *jsontree.Node
	// exampleHeaders are the example's headers as declared.
	exampleHeaders []boundary.ExampleHeader
	// form: the example's Content-Type is a form, so bodies are sent as
	// application/x-www-form-urlencoded pairs rather than JSON.
	form bool
}

// readContract reads p. It is the only place conform reads the model; a
// value the model could not read (wrong type) counts as not declared.
func readContract(p *boundary.Policy) *contract {
	c := &contract{
		keyHeader:     boundary.DefaultKeyHeader,
		maxKeyLength:  boundary.DefaultMaxKeyLength,
		scopeDeclared: p.Scope.OK(),
		scope:         p.Scope.Values(),
		tenantHeader:  p.ScopeSources.TenantHeader(),
		actorHeader:   p.ScopeSources.ActorHeader(),
	}
	if h := p.Idempotency; h != nil && h.OK() {
		c.keyHeader = h.KeyHeader()
		c.echoKey = h.EchoKeyHeader.Value
		c.maxKeyLength = h.KeyFormat.MaxKeyLength()
		if om := h.OnMissing; om.OK() {
			c.onMissing = refusalSpec{int(om.Status.Value), om.ErrorCode.Value}
		}
	}
	if f := p.Fingerprint; f.OK() {
		c.fingerprint = &fingerprintSpec{canonicalization: f.Canonicalization.Value, body: f.Inputs.Contains("body")}
		for _, m := range f.Canonicalization.ByMediaType {
			if c.fingerprint.byMediaType == nil {
				c.fingerprint.byMediaType = map[string]string{}
			}
			c.fingerprint.byMediaType[m.MediaType] = m.Name.Value
		}
	}
	if r := p.Replay; r.OK() {
		c.replay = &replaySpec{
			storedResponse: r.OnCompleted.Value == "stored_response", sameStatus: r.SameStatus.Value, sameBody: r.SameBody.Value,
			header: r.ReplayedHeader.Value,
		}
	}
	if in := p.Inflight; in.OK() {
		c.inflight = &inflightSpec{policy: in.Policy.Value, status: int(in.Status.Value), waitTimeoutMS: int(in.WaitTimeoutMS.Value)}
	}
	if m := p.Conflict.OnPayloadMismatch; m.OK() {
		c.mismatch = refusalSpec{int(m.Status.Value), m.ErrorCode.Value}
	}
	if p.Operations == nil {
		return c
	}
	for i := range p.Operations.Items {
		op := &p.Operations.Items[i]
		o := operation{
			Key: op.Key.Value, Method: op.Method.Value, Path: op.Path.Value,
			StateChanging: op.StateChanging, RequiresKey: p.Idempotency != nil && p.Idempotency.Requires(op),
		}
		if op.Example != nil {
			o.body, o.exampleHeaders = op.Example.Body(), op.Example.Headers
		}
		c.operations = append(c.operations, o)
	}
	return c
}

func (c *contract) scopes(member string) bool { return slices.Contains(c.scope, member) }

// replayedHeader is the declared replay marker, "" when none.
func (c *contract) replayedHeader() string {
	if c.replay == nil {
		return ""
	}
	return c.replay.header
}
