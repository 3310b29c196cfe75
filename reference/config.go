package reference

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/textproto"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/boundary"
	"github.com/idemlint/idemlint/checks/jsontree"
	"github.com/idemlint/idemlint/reference/jcs"
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

// policyFaults collects what the engine cannot run in a policy that passed
// the checks. Some faults pass every rule: a key pattern Go's regexp
// cannot compile, an exclusion of the whole body, a ttl of zero. The rest
// (a missing section) the rules report first today, but the engine must
// not depend on that to avoid a nil dereference should a rule ever be
// relaxed, disabled or suppressed. These findings name the rule that
// states the requirement, so the advice reads the same either way.
type policyFaults struct {
	doc      *boundary.Document
	findings []checks.Finding
}

func (pf *policyFaults) at(rule string, n *jsontree.Node, format string, args ...any) {
	pf.add(rule, n, n.Pointer(), fmt.Sprintf(format, args...))
}

// missing reports that obj lacks field, at obj, as the checks do.
func (pf *policyFaults) missing(rule string, obj *jsontree.Node, field, format string, args ...any) {
	pf.add(rule, obj, obj.Pointer()+"/"+jsontree.EscapePointer(field), fmt.Sprintf(format, args...))
}

func (pf *policyFaults) add(rule string, n *jsontree.Node, ptr, msg string) {
	f := checks.Finding{Rule: rule, Severity: checks.Error, File: pf.doc.Path, Pointer: ptr, Message: msg}
	f.Line, f.Column = pf.doc.Position.At(n.Offset)
	pf.findings = append(pf.findings, f)
}

// configure sets the engine up from doc's policy and returns what it
// could not use.
func (e *Engine) configure(doc *boundary.Document) []checks.Finding {
	p := doc.Policy
	pf := &policyFaults{doc: doc}
	e.policy = p
	e.configureKey(p.Idempotency, pf)
	e.configureScope(p, pf)
	e.configureFingerprint(p, pf)
	e.configureReplay(p, pf)
	e.configureInflight(p, pf)
	e.configureConflict(p, pf)
	e.configureStorage(p, pf)
	e.prebuildAnswers()
	return pf.findings
}

func (e *Engine) configureKey(h *boundary.HTTPIdempotency, pf *policyFaults) {
	e.keyHeaderName = boundary.DefaultKeyHeader
	e.keys.maxLength = boundary.DefaultMaxKeyLength
	status, code := defaultMissingKeyStatus, defaultMissingKeyCode
	if h != nil {
		e.keyHeaderName = h.Header
		e.keys.maxLength = h.KeyFormat.MaxLength
		e.echoKey = h.EchoKeyHeader
		if pat := h.KeyFormat.Pattern; pat != "" {
			re, err := regexp.Compile(pat)
			if err != nil {
				pf.at("IDL002", h.KeyFormat.Node.Get("pattern"), "key_format.pattern is not a valid regular expression (Go RE2 syntax): %v", err)
			}
			e.keys.pattern = re
		}
		if om := h.OnMissing; om != nil {
			status = cmp.Or(om.Status, status)
			code = cmp.Or(om.ErrorCode, code)
		}
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
// the package documentation).
func (e *Engine) configureScope(p *boundary.Policy, pf *policyFaults) {
	has := func(member string) bool { return slices.Contains(p.Scope, member) }
	if !has("idempotency_key") {
		const fix = `add "idempotency_key" to idempotency_scope: without it every request of an operation shares one record`
		if scope := p.Node.Get("idempotency_scope"); scope != nil {
			pf.at("IDL107", scope, fix)
		} else {
			pf.missing("IDL107", p.Node, "idempotency_scope", fix)
		}
	}
	if has("tenant_id") {
		e.tenantHeader = textproto.CanonicalMIMEHeaderKey(p.ScopeSources.TenantHeader)
	}
	if has("actor_id") {
		e.actorHeader = textproto.CanonicalMIMEHeaderKey(p.ScopeSources.ActorHeader)
	}
	e.router = newRouter(p.Operations)
	e.ops = make([]operation, len(p.Operations))
	for i, op := range p.Operations {
		var prefix []byte
		for _, m := range []struct{ member, value string }{
			{"service", p.Service},
			{"operation_key", op.Key},
			{"contract_version", p.ContractVersion},
		} {
			if has(m.member) {
				prefix = appendField(prefix, m.value)
			}
		}
		e.ops[i] = operation{
			key:           op.Key,
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

func (e *Engine) configureFingerprint(p *boundary.Policy, pf *policyFaults) {
	fp := p.Fingerprint
	if fp == nil {
		pf.missing("IDL106", p.Node, "idempotency_fingerprint", "declare idempotency_fingerprint with canonicalization and inputs: the engine needs it to tell a retry from a reused key")
		return
	}
	var raw bool
	switch fp.Canonicalization {
	case "canonical_json":
	case "raw_bytes":
		raw = true
	default:
		pf.missing("IDL106", fp.Node, "canonicalization", `set idempotency_fingerprint.canonicalization to "canonical_json"`)
	}
	if len(fp.Inputs) == 0 {
		pf.missing("IDL106", fp.Node, "inputs", `list the fingerprint inputs, e.g. ["method", "path", "body"]`)
	}
	algorithm := cmp.Or(fp.Algorithm, "sha256")
	// Validating the pointers against a trivial document reports a
	// malformed one, or "" (the whole body), which the schema lets pass.
	if _, err := jcs.CanonicalizeExactWithout([]byte("null"), fp.ExcludeFields); err != nil {
		pf.at("IDL106", fp.Node.Get("exclude_fields"), "fix idempotency_fingerprint.exclude_fields: %v", err)
	}
	e.fp = newFingerprinter(algorithm, raw, fp.Inputs, fp.ExcludeFields)
}

func (e *Engine) configureReplay(p *boundary.Policy, pf *policyFaults) {
	r := p.Replay
	if r == nil {
		pf.missing("IDL108", p.Node, "idempotency_replay", `declare idempotency_replay with on_completed "stored_response" and on_failed`)
		return
	}
	switch r.OnFailed {
	case "stored_response":
	case "reexecute":
		e.reexecute = true
	default:
		pf.missing("IDL108", r.Node, "on_failed", `set idempotency_replay.on_failed to "stored_response" or "reexecute"`)
	}
	if r.ReplayedHeader != "" {
		e.replayedHeader = textproto.CanonicalMIMEHeaderKey(r.ReplayedHeader)
	}
}

func (e *Engine) configureInflight(p *boundary.Policy, pf *policyFaults) {
	in := p.Inflight
	if in == nil {
		pf.missing("IDL109", p.Node, "idempotency_inflight", `declare idempotency_inflight: "wait" with wait_timeout_ms, or "reject" with status 409`)
		return
	}
	status := cmp.Or(in.Status, defaultInflightStatus)
	switch in.Policy {
	case "wait":
		if in.WaitTimeoutMS <= 0 {
			pf.missing("IDL109", in.Node, "wait_timeout_ms", "set idempotency_inflight.wait_timeout_ms to how long a duplicate may wait, in milliseconds (> 0)")
		}
		e.waitTimeout = time.Duration(in.WaitTimeoutMS) * time.Millisecond
		e.inflightTimeout = newRefusal(status, CodeInProgress, "an earlier request with this idempotency key is still in progress after waiting "+strconv.Itoa(in.WaitTimeoutMS)+" ms; retry later")
	case "reject":
		if in.Status == 0 {
			pf.missing("IDL109", in.Node, "status", "set idempotency_inflight.status to 409 (or 202) for rejected duplicates")
		}
		e.inflightReject = newRefusal(status, CodeInProgress, "an earlier request with this idempotency key is still in progress; retry later")
	default:
		pf.missing("IDL109", in.Node, "policy", `set idempotency_inflight.policy to "wait" or "reject"`)
	}
}

func (e *Engine) configureConflict(p *boundary.Policy, pf *policyFaults) {
	c := p.Conflict
	switch {
	case c == nil:
		pf.missing("IDL110", p.Node, "idempotency_conflict", "declare idempotency_conflict.on_payload_mismatch with status 422 and an error_code")
	case c.Node == nil:
		pf.missing("IDL110", c.Section, "on_payload_mismatch", "declare on_payload_mismatch with status 422 and an error_code")
	case c.Status == 0 || c.ErrorCode == "":
		field := "status"
		if c.Status != 0 {
			field = "error_code"
		}
		pf.missing("IDL110", c.Node, field, "set on_payload_mismatch.%s", field)
	default:
		e.mismatch = newRefusal(c.Status, c.ErrorCode, "this idempotency key was already used with a different payload; use a new key for a new request")
	}
}

func (e *Engine) configureStorage(p *boundary.Policy, pf *policyFaults) {
	s := p.Storage
	switch {
	case s == nil:
		pf.missing("IDL111", p.Node, "idempotency_storage", `declare idempotency_storage with tier and ttl, e.g. "24h"`)
	case s.TTL == "":
		pf.missing("IDL111", s.Node, "ttl", `set idempotency_storage.ttl, e.g. "24h"`)
	default:
		ttl, err := boundary.ParseTTL(s.TTL)
		if err != nil || ttl <= 0 {
			pf.at("IDL111", s.Node.Get("ttl"), `set idempotency_storage.ttl to a positive duration of at most 106751d (what the engine can represent), e.g. "24h"`)
		}
		e.ttl = ttl
	}
}

// prebuildAnswers builds the answers that do not depend on the policy.
func (e *Engine) prebuildAnswers() {
	e.tooLarge = newRefusal(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "the request body is larger than "+strconv.FormatInt(e.maxBody, 10)+" bytes")
	e.unreadable = newRefusal(http.StatusBadRequest, CodeBodyUnreadable, "the request body could not be read")
	e.storeDown = newRefusal(http.StatusServiceUnavailable, CodeStoreUnavailable, "the idempotency store is unavailable; the request was not executed, retry later")
	e.panicked = problem(http.StatusInternalServerError, CodeHandlerPanic, "the handler failed unexpectedly")
	e.handlerErr = problem(http.StatusInternalServerError, CodeHandlerError, "the handler failed")
}

// replayHeaders are the response headers stored with a record and
// replayed: those that say how to read the body or where the result is.
// Everything else (dates, request ids, cookies, caching) belongs to one
// response, not to the result.
var replayHeaders = []string{"Content-Type", "Content-Encoding", "Content-Language", "Content-Location", "Location"}

// storable returns resp with only replayHeaders, copied so the record owns
// them.
func storable(resp Response) Response {
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
