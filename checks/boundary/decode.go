package boundary

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/idemlint/idemlint/checks/jsontree"
)

// Parse parses and decodes one file. The document is nil when the source is
// not a JSON object at all; problems are the IDL001 findings either way.
func Parse(path string, src []byte) (*Document, []jsontree.Problem) {
	text := string(src)
	root, problems := jsontree.Parse(text)
	if root == nil {
		return nil, problems
	}
	return Decode(path, jsontree.NewPosition(text), root), problems
}

// Decode builds the typed document from a parsed top-level object.
func Decode(path string, pos *jsontree.Position, root *jsontree.Node) *Document {
	d := &Document{Path: path, Position: pos, Root: root, fields: make([]string, len(root.Members))}
	for i, m := range root.Members {
		d.fields[i] = m.Key
	}
	if k := Kind(str(root.Get("boundary"))); isKind(k) {
		d.Kind = k
	}
	d.From = str(root.Get("from"))
	d.To = str(root.Get("to"))
	d.Service = str(root.Get("service"))
	d.ContractVersion = str(root.Get("contract_version"))
	d.Operations = decodeOperations(root.Get("operations"))
	d.CORSAllowedHeaders = headerList(root.Get("cors_allowed_headers"))
	d.HeaderAllowInbound = headerList(root.Get("header_to_allow_inbound"))
	d.HeaderAllowOutbound = headerList(root.Get("header_to_allow_outbound"))
	d.Idempotency = decodeIdempotency(root.Get("http_idempotency"))
	d.Retry = decodeRetry(root.Get("http_retry"))
	switch d.Kind {
	case Adapter:
		d.Policy = decodePolicy(root, false)
		d.Policy.Service = d.Service
	case GatewayToAdapter:
		if emb := object(root.Get("adapter")); emb != nil {
			d.Policy = decodePolicy(emb, true)
			d.Policy.Service = str(emb.Get("service"))
		}
	}
	if d.Policy != nil {
		d.Policy.Idempotency = d.Idempotency
		d.Policy.ContractVersion = d.ContractVersion
		d.Policy.Operations = d.Operations
	}
	return d
}

func isKind(k Kind) bool {
	for _, known := range Kinds {
		if k == known {
			return true
		}
	}
	return false
}

// object returns n when it is an object, else nil.
func object(n *jsontree.Node) *jsontree.Node {
	if n != nil && n.Kind == jsontree.Object {
		return n
	}
	return nil
}

func str(n *jsontree.Node) string {
	if n != nil && n.Kind == jsontree.String {
		return n.Text
	}
	return ""
}

func boolean(n *jsontree.Node) bool { return n != nil && n.Kind == jsontree.Bool && n.True }

func integer(n *jsontree.Node) int {
	v, _ := n.Int()
	return int(v)
}

func headerList(n *jsontree.Node) HeaderList {
	if n == nil || n.Kind != jsontree.Array {
		return HeaderList{Present: n != nil}
	}
	return HeaderList{Node: n, Names: n.Strings(), Present: true, IsList: true}
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

func decodeOperations(n *jsontree.Node) []Operation {
	if n == nil || n.Kind != jsontree.Array {
		return nil
	}
	ops := make([]Operation, 0, len(n.Items))
	for i, it := range n.Items {
		if it.Kind != jsontree.Object {
			continue
		}
		op := Operation{
			Index:  i,
			Node:   it,
			Key:    str(it.Get("operation_key")),
			Method: str(it.Get("method")),
			Path:   str(it.Get("path")),
		}
		op.StateChanging = StateChangingByDefault(op.Method)
		if sc := it.Get("state_changing"); sc != nil && sc.Kind == jsontree.Bool {
			op.StateChanging = sc.True
		}
		if ex := object(it.Get("example")); ex != nil {
			op.Example = &Example{Node: ex, Body: ex.Get("body")}
			if hs := object(ex.Get("headers")); hs != nil {
				op.Example.Headers = make(map[string]string, len(hs.Members))
				for _, m := range hs.Members {
					if m.Value.Kind == jsontree.String {
						op.Example.Headers[m.Key] = m.Value.Text
					}
				}
			}
		}
		ops = append(ops, op)
	}
	return ops
}

func decodeIdempotency(n *jsontree.Node) *HTTPIdempotency {
	if n = object(n); n == nil {
		return nil
	}
	h := &HTTPIdempotency{
		Node:          n,
		fields:        make([]field, len(n.Members)),
		Header:        DefaultKeyHeader,
		Role:          str(n.Get("role")),
		EchoKeyHeader: boolean(n.Get("echo_key_header")),
		KeyFormat:     KeyFormat{MaxLength: DefaultMaxKeyLength},
	}
	for i, m := range n.Members {
		h.fields[i] = field{m.Key, m.Value.Kind}
	}
	if hd := str(n.Get("header")); hd != "" {
		h.Header = hd
	}
	if rk := object(n.Get("require_key")); rk != nil {
		h.RequireKey = &RequireKey{Node: rk, Methods: rk.Get("methods").Strings(), Operations: rk.Get("operations").Strings()}
	}
	if om := object(n.Get("on_missing")); om != nil {
		h.OnMissing = &OnMissing{Node: om, Action: str(om.Get("action")), Status: integer(om.Get("status")), ErrorCode: str(om.Get("error_code"))}
	}
	if kf := object(n.Get("key_format")); kf != nil {
		h.KeyFormat.Node = kf
		if ml := integer(kf.Get("max_length")); ml > 0 {
			h.KeyFormat.MaxLength = ml
		}
		h.KeyFormat.Pattern = str(kf.Get("pattern"))
	}
	return h
}

func decodeRetry(n *jsontree.Node) *HTTPRetry {
	if n = object(n); n == nil {
		return nil
	}
	r := &HTTPRetry{
		Node:                   n,
		Enabled:                boolean(n.Get("enabled")),
		MaxAttempts:            integer(n.Get("max_attempts")),
		RequiresIdempotencyKey: boolean(n.Get("requires_idempotency_key")),
		Mode:                   str(n.Get("mode")),
		Methods:                n.Get("methods").Strings(),
		PerTryTimeoutMS:        integer(n.Get("per_try_timeout_ms")),
	}
	if on := n.Get("retry_on"); on != nil && on.Kind == jsontree.Array {
		for _, it := range on.Items {
			switch it.Kind {
			case jsontree.String:
				t := RetryTrigger{Node: it, Name: it.Text}
				if code, err := strconv.Atoi(it.Text); err == nil {
					t.Status = code
				}
				r.RetryOn = append(r.RetryOn, t)
			case jsontree.Number:
				if code, ok := it.Int(); ok {
					r.RetryOn = append(r.RetryOn, RetryTrigger{Node: it, Name: strconv.FormatInt(code, 10), Status: int(code)})
				}
			}
		}
	}
	return r
}

func decodePolicy(n *jsontree.Node, embedded bool) *Policy {
	p := &Policy{
		Node:     n,
		Embedded: embedded,
		Scope:    n.Get("idempotency_scope").Strings(),
		ScopeSources: ScopeSources{
			TenantHeader: DefaultTenantHeader,
			ActorHeader:  DefaultActorHeader,
		},
	}
	if ss := object(n.Get("scope_sources")); ss != nil {
		if h, ok := strings.CutPrefix(str(ss.Get("tenant_id")), "header:"); ok && h != "" {
			p.ScopeSources.TenantHeader = h
		}
		if h, ok := strings.CutPrefix(str(ss.Get("actor_id")), "header:"); ok && h != "" {
			p.ScopeSources.ActorHeader = h
		}
	}
	if f := object(n.Get("idempotency_fingerprint")); f != nil {
		p.Fingerprint = &Fingerprint{
			Node:             f,
			Canonicalization: str(f.Get("canonicalization")),
			Inputs:           f.Get("inputs").Strings(),
			Algorithm:        str(f.Get("algorithm")),
			ExcludeFields:    f.Get("exclude_fields").Strings(),
		}
	}
	if r := object(n.Get("idempotency_replay")); r != nil {
		p.Replay = &Replay{
			Node:           r,
			OnCompleted:    str(r.Get("on_completed")),
			SameStatus:     boolean(r.Get("same_status")),
			SameBody:       boolean(r.Get("same_body")),
			OnFailed:       str(r.Get("on_failed")),
			ReplayedHeader: str(r.Get("replayed_header")),
		}
	}
	if i := object(n.Get("idempotency_inflight")); i != nil {
		p.Inflight = &Inflight{Node: i, Policy: str(i.Get("policy")), Status: integer(i.Get("status")), WaitTimeoutMS: integer(i.Get("wait_timeout_ms")), LeaseMS: DefaultLeaseMS}
		if l := integer(i.Get("lease_ms")); l > 0 {
			p.Inflight.LeaseMS = l
		}
	}
	if c := object(n.Get("idempotency_conflict")); c != nil {
		p.Conflict = &Conflict{Section: c}
		if m := object(c.Get("on_payload_mismatch")); m != nil {
			p.Conflict.Node = m
			p.Conflict.Status = integer(m.Get("status"))
			p.Conflict.ErrorCode = str(m.Get("error_code"))
		}
	}
	if s := object(n.Get("idempotency_storage")); s != nil {
		p.Storage = &Storage{Node: s, Tier: str(s.Get("tier")), TTL: str(s.Get("ttl")), Backend: str(s.Get("backend")), MaxRecords: DefaultMaxRecords}
		if m := integer(s.Get("max_records")); m > 0 {
			p.Storage.MaxRecords = m
		}
		if red := object(s.Get("ttl_reduction")); red != nil {
			p.Storage.Reason = strings.TrimSpace(str(red.Get("reason")))
			p.Storage.Reduced = boolean(red.Get("declared")) && p.Storage.Reason != ""
		}
	}
	if o := object(n.Get("observability")); o != nil {
		p.Observe = &Observability{Node: o, LogFields: o.Get("log_fields").Strings(), RequestIDHeader: str(o.Get("request_id_header"))}
	}
	return p
}

// ParseTTL parses a retention duration: an integer and one of the units s,
// m, h, d (24h) or w (7d), e.g. "24h" or "14d".
func ParseTTL(s string) (time.Duration, error) {
	if len(s) < 2 {
		return 0, fmt.Errorf("ttl %q is not an integer followed by s, m, h, d or w", s)
	}
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	unit, ok := units[s[len(s)-1]]
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if !ok || err != nil || n < 0 || n > int64(math.MaxInt64/unit) {
		return 0, fmt.Errorf("ttl %q is not an integer followed by s, m, h, d or w", s)
	}
	return time.Duration(n) * unit, nil
}
