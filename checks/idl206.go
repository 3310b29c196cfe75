package checks

import "fmt"

// IDL206 checks that a browser is told to send every key its adapter
// demands.
var idl206 = &Rule{
	ID:       "IDL206",
	Name:     "no-surprise-400",
	Severity: Error,
	Summary:  "an operation whose adapter requires a key is key-required at its browser_to_bff edge too",
	Doc: `Where a key is required is part of the browser's contract. If the adapter
rejects an operation without a key but the browser_to_bff edge does not
require one, browser code that follows its contract gets a 400 from deep
inside the system, typically after a change nobody connected to the front
end.

Reported for every operation whose adapter requires the key while its
browser edge does not: one the browser edge declares read-only (a GET, or
"state_changing": false) that the adapter nevertheless keys, for example by
"require_key": {"methods": ["POST"]} catching a POST that only computes a
quote, and a state-changing one, for which IDL101 reports the browser edge
too; that finding is named as a related location.

Fix: add the operation to the browser edge's require_key.operations, or stop
requiring the key for it at the adapter.`,
	Requires: []Input{ChainGraph},
	CheckSet: func(p *SetPass) {
		r := newChainReporter(p)
		for _, c := range ChainGraph.Of(p).Chains {
			browser := c.Hops[0]
			if !c.Complete() || !c.Last().RequiresKey() || browser.RequiresKey() {
				continue
			}
			why := fmt.Sprintf("%s rejects it without a key, and browsers are not told to send one", c.Last())
			f := r.unrequired(c, browser, fmt.Sprintf("add %q to require_key.operations", c.Operation()), why)
			if c.StateChanging() {
				// A state-changing operation the browser edge sends
				// without a key is IDL101's to report too: the findings
				// are linked where it does.
				p.Overlap(f, idl101)
			}
		}
	},
}
