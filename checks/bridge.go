package checks

import (
	"fmt"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// This file is what the OpenAPI rules (IDL301-IDL304, spec section 7) read
// of the boundary sets: they see them only through browserOperations and
// ownerRefusals, so a change of the typed model touches these two.

// browserOp is an operation of a browser_to_bff edge: what the browser
// calls, and so what the OpenAPI description describes.
type browserOp struct {
	doc    *boundary.Document
	at     boundary.Pos // the operation in doc
	key    string       // operation_key
	method string
	path   string
	// header is the key header the edge requires, "" when it does not
	// require the key for this operation.
	header string
	// described are the operations of the description it reaches.
	described []*openapi.Operation
}

// bridge is what the OpenAPI rules share in one run, computed once for all
// of them.
type bridge struct {
	graphs []*chain.Graph // of every set
	ops    []browserOp
	chains map[chainStart][]*chain.Chain
}

// browserOperations lists the operations of every browser_to_bff document,
// in document order, with the operations of the description they reach.
func (p *SetPass) browserOperations() []browserOp {
	b := p.bridge
	if b.ops != nil {
		return b.ops
	}
	b.ops = []browserOp{}
	for _, d := range p.Docs {
		if d.Kind != boundary.BrowserToBFF {
			continue
		}
		for i := range d.Operations.Items {
			op := &d.Operations.Items[i]
			bo := browserOp{doc: d, at: op.Pos, key: op.Key.Value, method: op.Method.Value, path: op.Path.Value,
				described: p.API.Find(op.Method.Value, op.Path.Value)}
			if d.Idempotency.Requires(op) {
				bo.header = chain.DeclaredHeader(d)
			}
			b.ops = append(b.ops, bo)
		}
	}
	return b.ops
}

// edge names the operation's browser edge: "web -> checkout-bff".
func (b browserOp) edge() string { return b.doc.From.Value + " -> " + b.doc.To.Value }

// describe names a browser operation in messages.
func (b browserOp) describe() string {
	return fmt.Sprintf("%s %s (%s)", b.method, b.path, b.key)
}

// refusal is a status the owner policy of a chain answers instead of
// executing, and why.
type refusal struct {
	status int
	owner  string // the policy's service
	why    string
}

// chainStart is where chains enter a set: a browser edge and an operation.
type chainStart struct {
	doc *boundary.Document
	key string
}

// ownerRefusals are the refusals of the owner policies of the complete
// chains that start at b and on which the owner requires the key: without
// a key the owner answers none of them.
func (p *SetPass) ownerRefusals(b browserOp) []refusal {
	shared := p.bridge
	if shared.chains == nil {
		shared.chains = map[chainStart][]*chain.Chain{}
		for _, g := range shared.graphs {
			for _, c := range g.Chains {
				s := chainStart{c.Hops[0].Doc, c.Operation}
				shared.chains[s] = append(shared.chains[s], c)
			}
		}
	}
	var out []refusal
	for _, c := range shared.chains[chainStart{b.doc, b.key}] {
		if !c.Complete() || !c.Last().RequiresKey() {
			continue
		}
		pol := c.Last().Doc.Policy
		add := func(status boundary.Int, why string) {
			if status.OK() && status.Value != 0 {
				out = append(out, refusal{int(status.Value), pol.Service.Value, why})
			}
		}
		if pol.Idempotency != nil {
			add(pol.Idempotency.OnMissing.Status, "to a request without a valid key (http_idempotency.on_missing)")
		}
		add(pol.Conflict.OnPayloadMismatch.Status, "when a key is reused with another payload (idempotency_conflict.on_payload_mismatch)")
		if pol.Inflight.Policy.Value == "reject" {
			add(pol.Inflight.Status, "to a duplicate of a request still running (idempotency_inflight)")
		}
	}
	return out
}

// ReportAt reports, at the rule's severity, a finding at a position of a
// file that is not a boundary document (the OpenAPI description).
func (p *SetPass) ReportAt(at openapi.Location, pointer string, format string, args ...any) {
	p.add(Finding{Rule: p.Rule.ID, Severity: p.Rule.Severity, File: at.File,
		Line: at.Line, Column: at.Column, Pointer: pointer, Message: message("", format, args)})
}
