package checks

import "github.com/idemlint/idemlint/checks/chain"

// CheckSet runs the cross-document rules over one set of documents, given
// their facts (chain.FactsOf), for the tests and benchmarks that hold the
// rules to facts built without files.
func CheckSet(docs []*chain.Facts, opts *Options) []Finding {
	return CheckSets([][]*chain.Facts{docs}, opts)
}

// CheckSets runs the cross-document rules over sets of documents, given
// their facts, as a check of their files would, with the related
// locations linked.
func CheckSets(sets [][]*chain.Facts, opts *Options) []Finding {
	findings, overlaps, _ := checkSets(newRun(opts).rules, sets, make([]int, len(sets)), opts)
	return linkOverlaps(findings, overlaps)
}
