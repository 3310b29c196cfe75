package reference

import (
	"cmp"
	"encoding/binary"
	"net/http"
	"net/textproto"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// operation is a declared operation as the engine serves it.
type operation struct {
	key           string
	requiresKey   bool
	stateChanging bool
	// idPrefix encodes the identity members fixed by the operation
	// (service, operation_key, contract_version, as far as the scope
	// names them); requests append tenant, actor and key.
	idPrefix string
}

// configure sets the engine up from doc's policy. Whether a policy is
// valid is decided in one place, the checks (checks.CheckDocument), and
// New refuses a policy with an error finding before it gets here; so
// configure cannot fail: it reads what a valid policy declares and the
// spec's defaults for the rest, so a rule that is turned off or relaxed
// never leaves the engine with a nil or a zero it would trip on.
func (e *Engine) configure(doc *boundary.Document) {
	p := doc.Policy
	e.policy = p
	e.configureKey(p.Idempotency)
	e.configureScope(p)
	e.configureFingerprint(p)
	e.configureReplay(p)
	e.configureInflight(p)
	e.configureConflict(p)
	e.configureStorage(p)
	e.prebuildAnswers()
}

func (e *Engine) configureKey(h *boundary.HTTPIdempotency) {
	e.keyHeaderName = h.KeyHeader()
	e.keys.maxLength = h.KeyFormat.MaxKeyLength()
	e.echoKey = h.EchoKeyHeader.Value
	// IDL002 reports a pattern Go cannot compile; New refused it.
	if pat := h.KeyFormat.Pattern; pat.OK() && pat.Value != "" {
		if re, err := regexp.Compile(pat.Value); err == nil {
			e.keys.pattern, e.keys.charset = re, charsetOf(re)
		}
	}
	status, code := defaultMissingKeyStatus, defaultMissingKeyCode
	if om := h.OnMissing; om.OK() {
		status = cmp.Or(int(om.Status.Value), status)
		code = cmp.Or(om.ErrorCode.Value, code)
	}
	e.keyHeader = textproto.CanonicalMIMEHeaderKey(e.keyHeaderName)
	for f := keyMissing; f < numKeyFaults; f++ {
		if f != keyMismatch || e.keys.pattern != nil {
			e.keyProblems[f] = newRefusal(status, code, e.keys.describe(f, e.keyHeaderName))
		}
	}
}

// configureScope builds the operations and their identity prefixes. The
// fingerprint scope member is deliberately left out of the identity (see
// the package documentation); idempotency_key is always part of it, since
// without it all requests of an operation would share one record (IDL107).
func (e *Engine) configureScope(p *boundary.Policy) {
	has := p.Scope.Contains
	if has("tenant_id") {
		e.tenantHeader = textproto.CanonicalMIMEHeaderKey(p.ScopeSources.TenantHeader())
	}
	if has("actor_id") {
		e.actorHeader = textproto.CanonicalMIMEHeaderKey(p.ScopeSources.ActorHeader())
	}
	e.router = newRouter(p.Operations.Items)
	e.ops = make([]operation, len(p.Operations.Items))
	for i := range p.Operations.Items {
		op := &p.Operations.Items[i]
		var prefix []byte
		for _, m := range []struct{ member, value string }{
			{"service", p.Service.Value},
			{"operation_key", op.Key.Value},
			{"contract_version", p.ContractVersion.Value},
		} {
			if has(m.member) {
				prefix = appendField(prefix, m.value)
			}
		}
		e.ops[i] = operation{
			key:           op.Key.Value,
			requiresKey:   p.Idempotency.Requires(op),
			stateChanging: op.StateChanging,
			idPrefix:      string(prefix),
		}
	}
}

// appendField appends one identity member, length-prefixed so that no two
// tuples encode alike whatever bytes their members hold.
func appendField[T string | []byte](b []byte, s T) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (e *Engine) configureFingerprint(p *boundary.Policy) {
	fp := &p.Fingerprint
	algorithm := cmp.Or(fp.Algorithm.Value, "sha256")
	canon := oneCanonicalization(canonicalJSON)
	if fp.Canonicalization.Value == "raw_bytes" {
		canon = oneCanonicalization(rawBytes)
	}
	if byType := fp.Canonicalization.ByMediaType; byType != nil {
		entries := make(map[string]string, len(byType))
		for _, m := range byType {
			entries[m.MediaType] = m.Name.Value
		}
		canon = canonicalizationByMediaType(entries)
	}
	inputs := fp.Inputs.Values()
	if len(inputs) == 0 {
		inputs = []string{"method", "path", "body"} // IDL106 requires them; never fingerprint nothing
	}
	e.fp = newFingerprinter(algorithm, canon, inputs, fp.ExcludeFields.Values())
	e.unsupportedMedia = newRefusal(http.StatusUnsupportedMediaType, CodeUnsupportedMedia,
		"the request body's media type (Content-Type) is none the idempotency fingerprint can read")
}

func (e *Engine) configureReplay(p *boundary.Policy) {
	e.reexecute = p.Replay.OnFailed.Value == "reexecute"
	if h := p.Replay.ReplayedHeader; h.OK() && h.Value != "" {
		e.replayedHeader = textproto.CanonicalMIMEHeaderKey(h.Value)
	}
}

func (e *Engine) configureInflight(p *boundary.Policy) {
	in := &p.Inflight
	status := cmp.Or(int(in.Status.Value), defaultInflightStatus)
	e.lease = time.Duration(in.Lease()) * time.Millisecond
	if in.Policy.Value == "wait" && in.WaitTimeoutMS.Value > 0 {
		ms := in.WaitTimeoutMS.Value
		e.waitTimeout = time.Duration(ms) * time.Millisecond
		e.inflightTimeout = newRefusal(status, CodeInProgress, "an earlier request with this idempotency key is still in progress after waiting "+strconv.FormatInt(ms, 10)+" ms; retry later")
		return
	}
	// reject, and anything a valid policy cannot declare: never wait.
	e.inflightReject = newRefusal(status, CodeInProgress, "an earlier request with this idempotency key is still in progress; retry later")
}

func (e *Engine) configureConflict(p *boundary.Policy) {
	m := &p.Conflict.OnPayloadMismatch
	e.mismatch = newRefusal(cmp.Or(int(m.Status.Value), http.StatusUnprocessableEntity), cmp.Or(m.ErrorCode.Value, defaultMismatchCode),
		"this idempotency key was already used with a different payload; use a new key for a new request")
}

func (e *Engine) configureStorage(p *boundary.Policy) {
	e.maxRecords = int(p.Storage.RecordLimit())
	e.maxBytes = p.Storage.ByteLimit()
	if e.tenantHeader != "" {
		e.tenantPercent = p.Storage.TenantPercent()
	}
	e.ttl = defaultTTL
	if ttl, err := boundary.ParseTTL(p.Storage.TTL.Value); err == nil && ttl > 0 {
		e.ttl = ttl
	}
}

// prebuildAnswers builds the answers that do not depend on the policy.
func (e *Engine) prebuildAnswers() {
	e.tooLarge = newRefusal(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "the request body is larger than "+strconv.FormatInt(e.maxBody, 10)+" bytes")
	e.unreadable = newRefusal(http.StatusBadRequest, CodeBodyUnreadable, "the request body could not be read")
	e.noBodyMemory = retryAfter(newRefusal(http.StatusServiceUnavailable, CodeBodyMemoryExhausted, "the server holds as many request bodies as it may; the request was not executed, retry later"), bodyMemoryWait)
	e.storeFull = newRefusal(http.StatusServiceUnavailable, CodeStoreFull, "the idempotency store is full; the request was not executed, retry later")
	e.tenantFull = newRefusal(http.StatusServiceUnavailable, CodeStoreFull, "this tenant holds its share of the idempotency store; the request was not executed, retry later")
	e.notCommitted = newRefusal(http.StatusServiceUnavailable, CodeNotCommitted, "the request's writes could not be committed with its idempotency record and were rolled back, or may have been; retry with the same key to learn the outcome")
	e.storeDown = newRefusal(http.StatusServiceUnavailable, CodeStoreUnavailable, "the idempotency store is unavailable; the request was not executed, retry later")
	e.panicked = problem(http.StatusInternalServerError, CodeHandlerPanic, "the handler failed unexpectedly")
	e.handlerErr = problem(http.StatusInternalServerError, CodeHandlerError, "the handler failed")
}

// replayHeaders are the response headers stored with a record and
// replayed: those that say how to read the body or where the result is.
// Everything else (dates, request ids, cookies, caching) belongs to one
// response, not to the result.
var replayHeaders = []string{"Content-Type", "Content-Encoding", "Content-Language", "Content-Location", "Location"}

// storable returns resp with only replayHeaders. A header map holding no
// other is kept as it is, as a Response may not be modified once returned
// (see Handler); else the replay headers are copied into a map the record
// owns.
func storable(resp Response) Response {
	replayOnly := true
	for k := range resp.Header {
		replayOnly = replayOnly && slices.Contains(replayHeaders, k)
	}
	if replayOnly {
		if len(resp.Header) == 0 {
			resp.Header = nil
		}
		return resp
	}
	var h http.Header
	for _, k := range replayHeaders {
		if v, ok := resp.Header[k]; ok {
			if h == nil {
				h = make(http.Header, len(replayHeaders))
			}
			h[k] = slices.Clone(v)
		}
	}
	resp.Header = h
	return resp
}
