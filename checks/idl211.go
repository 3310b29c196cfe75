package checks

import (
	"fmt"
	"github.com/idemlint/idemlint/checks/chain"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL211 reports a hop defined twice for one operation.
var idl211 = &Rule{
	ID:       "IDL211",
	Name:     "one-document-per-hop",
	Severity: Error,
	Summary:  "one document per hop: no two edges with the same boundary, from and to, nor two owner policies for one service, declare the same operation",
	Doc: `Each hop of an operation's chain is described once. Two edge documents with
the same boundary, "from" and "to" that both declare an operation_key, or
two owner policies (standalone or embedded) for the same service that both
declare one, are two definitions of the same hop: they usually disagree
(a header list, a retry, a contract_version), and which one is the truth
depends on who reads them. Typical causes are a copied flow directory whose
ids were never renamed, and a policy both embedded in its gateway edge and
kept as a standalone adapter document.

Chains use the first definition (in sorted path order), so the rules judge
one consistent path and the cost of a set stays linear however often ids
recur. Reported at the operation in the later document, with the first as
a related location.

Fix: merge the two documents, delete the stale copy, or rename the
components of a flow that is really different.`,
	Requires: []Input{ChainGraph},
	CheckSet: func(p *SetPass) {
		for _, dup := range ChainGraph.Of(p).Duplicates {
			what := fmt.Sprintf("%s %s -> %s", dup.Doc.Kind, dup.Doc.From.Value, dup.Doc.To.Value)
			if dup.Policy {
				what = fmt.Sprintf("the owner policy of service %q", dup.Doc.Policy.Service.Value)
			}
			f := p.Report(dup.Doc, operationKeyPos(dup.Doc, dup.Operation), "",
				"%s declares %q a second time; chains use the first definition (the related location): merge the two documents or remove the operation from one", what, dup.Operation)
			f.Relate(dup.First, operationKeyPos(dup.First, dup.Operation), "the first definition of this hop")
		}
	},
}

// operationKeyPos is the place of the operation_key of doc's operation
// key, or of the document when it has none by that key.
func operationKeyPos(doc *chain.Facts, key string) boundary.Pos {
	for _, op := range doc.Operations.Items {
		if op.Key.OK() && op.Key.Value == key {
			return op.Key.Pos
		}
	}
	return doc.Root.Pos
}
