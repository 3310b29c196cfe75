package checks

import (
	"fmt"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL210 warns about documents no chain reaches.
var idl210 = &Rule{
	ID:       "IDL210",
	Name:     "orphan-document",
	Severity: Warning,
	Summary:  "a document that is part of no chain",
	Doc: `Every chain starts at a browser_to_bff edge and follows from/to, service and
operation_key. A bff_to_gateway, gateway_to_adapter or adapter document that
no chain reaches, not even partly, is checked for nothing that matters: it is
stale (the flow was renamed or removed), or its "from", "to", "service" or
operation keys are misspelt, and the real flow goes unchecked. A document a
chain reaches but cannot leave is not an orphan: IDL201 reports the break.
When some file of the set cannot be read or linked (it is not JSON, or lacks
its kind, "from", "to" or "service"; IDL001 and IDL002 say so) the finding
says how many: one of them may be the missing link. A document that defines
the same hop as an earlier one (IDL211) is reached by no chain either; its
finding names the document chains use. When a misspelt link leaves the
document out ("edge-gwy" for "edge-gw"), the finding names IDL201's finding
at the typo as related.

Fix: correct the linking fields so a chain reaches the document, or delete
it.`,
	Requires: []Input{ChainGraph, chainTypos},
	CheckSet: func(p *SetPass) {
		graph := ChainGraph.Of(p)
		note := missingHopNote(graph)
		causes := chainTypos.Of(p).leftOut
		for _, d := range p.Docs {
			if d.Kind == boundary.BrowserToBFF || !chain.Linkable(d) || graph.OnChain(d) {
				continue // a browser edge starts chains; an unlinkable one is the schema's finding
			}
			prev, n := graph.Upstream(d)
			at := d.From.Value
			if d.Kind == boundary.Adapter {
				at = d.Service.Value
			}
			msg := fmt.Sprintf("no chain reaches this document: no %s document has to %q; link it or remove it", prev, at)
			if n > 0 {
				msg = fmt.Sprintf("no chain from a browser reaches this document: the %s documents that end at %q are unreached or carry none of its operations; link it or remove it", prev, at)
			}
			f := p.Report(d, d.KindField.Pos, "", "%s", msg+note)
			if t := causes[d]; t != nil {
				p.CausedBy(f, idl201, t.doc, t.at)
			}
			for _, dup := range graph.Duplicates {
				if dup.Doc == d {
					f.Relate(dup.First, dup.First.KindField.Pos, fmt.Sprintf("IDL211: chains use this document, which defines the same hop for %q", dup.Operation))
				}
			}
		}
	},
}
