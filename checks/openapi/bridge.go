package openapi

import (
	"fmt"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// This file is what the OpenAPI rules (IDL301-IDL304, docs/openapi.md, The
// rules) read:
// the description (Description) and, of the boundary sets, only what the
// input browserEdges derives from their facts, so a change of the typed
// model touches this file alone.

// Description is the OpenAPI description the rules hold the boundary sets
// to. The caller loads it (Load) and supplies it to a run
// (checks.Options.Inputs); without one the rules do not run. An *API is a
// checks.FileInput: its file, when it lies among the documents, is no
// boundary document.
var Description = &checks.InputOf[*API]{
	Name:    "OpenAPI description",
	Scope:   "openapi",
	Missing: `"idemlint openapi check --spec FILE" gives one`,
}

// browserOp is an operation of a browser_to_bff edge: what the browser
// calls, and so what the OpenAPI description describes.
type browserOp struct {
	doc    *chain.Facts
	at     boundary.Pos // the operation in doc
	key    string       // operation_key
	method string
	path   string
	// header is the key header the edge requires, "" when it does not
	// require the key for this operation.
	header string
	// described are the operations of the description it reaches.
	described []*Operation
}

// bridge is what the OpenAPI rules read of every set, built once per run.
type bridge struct {
	// ops are the operations of every browser_to_bff document, in
	// document order, with the operations of the description they reach.
	ops    []browserOp
	chains map[chainStart][]*chain.Chain // of every set, by where they start
}

// browserEdges is the bridge between the description and the chains of
// every set.
var browserEdges = &checks.InputOf[*bridge]{
	Name: "browser operations and their chains",
	Build: func(p *checks.InputPass) (*bridge, error) {
		api, err := Description.From(p)
		if err != nil {
			return nil, err
		}
		graphs, err := checks.ChainGraph.EachSet(p)
		if err != nil {
			return nil, err
		}
		b := &bridge{ops: []browserOp{}, chains: map[chainStart][]*chain.Chain{}}
		for _, d := range p.Docs {
			if d.Kind != boundary.BrowserToBFF {
				continue
			}
			for i := range d.Operations.Items {
				op := &d.Operations.Items[i]
				bo := browserOp{doc: d, at: op.Pos, key: op.Key.Value, method: op.Method.Value, path: op.Path.Value,
					described: api.Find(op.Method.Value, op.Path.Value)}
				if d.Requires(op) {
					bo.header = chain.DeclaredHeader(d)
				}
				b.ops = append(b.ops, bo)
			}
		}
		for _, g := range graphs {
			for _, c := range g.Chains {
				s := chainStart{c.Hops[0].Doc, c.Operation()}
				b.chains[s] = append(b.chains[s], c)
			}
		}
		return b, nil
	},
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
	doc *chain.Facts
	key string
}

// ownerRefusals are the refusals of the owner policies of the complete
// chains that start at b and on which the owner requires the key: without
// a key the owner answers none of them.
func (br *bridge) ownerRefusals(b browserOp) []refusal {
	var out []refusal
	for _, c := range br.chains[chainStart{b.doc, b.key}] {
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

// reportAt reports, at the rule's severity, a finding at a place of the
// description.
func reportAt(p *checks.SetPass, at Location, pointer string, format string, args ...any) {
	p.ReportAt(at.File, at.Line, at.Column, pointer, format, args...)
}
