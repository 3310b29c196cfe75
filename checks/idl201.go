package checks

import (
	"fmt"
	"strconv"

	"github.com/idemlint/idemlint/checks/boundary"
	"github.com/idemlint/idemlint/checks/chain"
)

// IDL201 follows every state-changing operation of a browser edge to an
// adapter policy. The chain graph records where each path stops; this rule
// says so at the last document the path reached.
var IDL201 = register(&Rule{
	ID:       "IDL201",
	Name:     "chain-complete",
	Severity: Error,
	Summary:  "every state-changing browser operation reaches an adapter policy through a complete chain",
	Doc: `Documents link into chains: an edge's "to" is the next edge's "from", an
adapter's "service" is the "to" of a gateway_to_adapter edge (or the policy is
embedded in that edge under "adapter"), and an operation goes on only through
documents that list its operation_key. A state-changing operation that the
browser edge accepts but no chain carries to an adapter policy has no owner:
nothing deduplicates it, and the other chain rules cannot see its path.
Every path the operation can take must end at a policy: a BFF that sends it
to two gateways needs both to carry it on.

Reported at the operation in the last document the path reached, saying why
the path stops there. While a document of the set cannot be linked (it is not
JSON, or lacks its kind, "from", "to" or "service"; IDL001 and IDL002 say so)
the rule stays quiet: that document may be the missing hop.

Fix: add the operation to the next hop's document, add the missing document,
or correct the "from", "to" or "service" that does not match.`,
	CheckSet: func(p *SetPass) {
		if p.Graph.Gaps > 0 {
			return // IDL001 or IDL002 reports a document that may be the missing link
		}
		r := newChainReporter(p)
		for _, c := range p.Graph.Chains {
			if !c.StateChanging || c.Complete() {
				continue
			}
			last := c.Last()
			r.at(c, last.Doc, operationKey(last.Op), "the chain stops here: "+c.StopReason()+"; "+stopFix(c))
		}
	},
})

// stopFix says what would let an incomplete chain go on.
func stopFix(c *chain.Chain) string {
	s := c.Stop
	switch {
	case len(s.Lacking) == 1:
		return "add the operation there"
	case len(s.Lacking) > 1:
		return "add the operation to the one that should carry it"
	case s.Next != boundary.Adapter:
		return `correct "to", or add that document`
	case c.Last().Doc.Policy != nil:
		return fmt.Sprintf("set adapter.service to %q", s.At)
	}
	return `add an adapter document with that service, or embed the policy in this edge under "adapter"`
}

// chainReporter reports the findings of one run of a chain rule
// (IDL201-IDL210), each once: a defect that several chains share, such as a
// gateway list that every flow crosses, is reported for the first chain in
// Graph order only, so output stays short and stable.
type chainReporter struct {
	p    *SetPass
	seen map[chainFinding]bool
}

type chainFinding struct {
	doc     *boundary.Document
	pointer string
	msg     string
}

func newChainReporter(p *SetPass) *chainReporter {
	return &chainReporter{p: p, seen: map[chainFinding]bool{}}
}

// first reports whether f is new, and remembers it.
func (r *chainReporter) first(f chainFinding) bool {
	if r.seen[f] {
		return false
	}
	r.seen[f] = true
	return true
}

// at reports msg at the value at pointer in doc (or where that value
// belongs, if it is missing), as a finding of chain c.
func (r *chainReporter) at(c *chain.Chain, doc *boundary.Document, pointer, msg string) {
	if r.first(chainFinding{doc, pointer, msg}) {
		r.p.Report(doc, pointer, c.Name, "%s", msg)
	}
}

// Pointers to what the chain rules report on.
const (
	idempotencyPointer = "/http_idempotency"
	maxAttemptsPointer = "/http_retry/max_attempts"
)

// operationKey points at the operation_key of op.
func operationKey(op *boundary.Operation) string {
	return "/operations/" + strconv.Itoa(op.Index) + "/operation_key"
}

// idempotencyField points at a member of http_idempotency.
func idempotencyField(name string) string { return idempotencyPointer + "/" + name }
