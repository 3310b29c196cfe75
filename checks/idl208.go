package checks

import (
	"fmt"
	"math"
	"strings"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL208 bounds how many times retries along a chain can multiply one
// request.
var idl208 = &Rule{
	ID:       "IDL208",
	Name:     "retry-amplification",
	Severity: Warning,
	Summary:  "retry amplification: the product of max_attempts along a chain is at most 10 (configurable)",
	Doc: `Retries nest: when the browser edge makes 3 attempts, the BFF 3 per attempt
and the gateway 3 per attempt, one click can reach the adapter 27 times. The
key keeps that from executing twice, but an overloaded adapter answering
slowly is exactly when every layer retries, and the multiplied load turns a
slowdown into an outage. The product of max_attempts over the edges whose
http_retry is enabled and retries the operation's method (an absent
max_attempts counts 1) stays within the limit, 10 by default; change it with
--max-retry-amplification or "max_retry_amplification" in .idemlint.json. Read-only operations count too: their retries load
the adapter all the same.

Reported at the max_attempts of the hop that contributes most.

Fix: retry at one layer (usually the one nearest the failure) and lower or
disable the others.`,
	Requires: []Input{ChainGraph},
	CheckSet: func(p *SetPass) {
		limit := p.Limits.MaxRetryAmplification
		if limit < 1 {
			limit = DefaultLimits().MaxRetryAmplification
		}
		r := newChainReporter(p)
		for _, c := range ChainGraph.Of(p).Chains {
			product, worst := 1, -1
			for i, h := range c.Hops {
				n := attempts(h)
				if n == 1 {
					continue
				}
				if product > math.MaxInt/n {
					product = math.MaxInt
				} else {
					product *= n
				}
				if worst < 0 || n > attempts(c.Hops[worst]) {
					worst = i
				}
			}
			if product <= limit {
				continue
			}
			var factors []string
			for _, h := range c.Hops {
				if n := attempts(h); n > 1 {
					factors = append(factors, fmt.Sprintf("%s x%d", h.Endpoints(), n))
				}
			}
			h := c.Hops[worst]
			r.at(c, h.Doc, h.Doc.Retry.MaxAttempts.Pos, fmt.Sprintf("retries multiply one request into %d attempts (%s), more than %d: lower max_attempts or retry at fewer hops", product, strings.Join(factors, ", "), limit))
		}
	},
}

// attempts is how many times hop h may send the chain's operation: its
// max_attempts when its retry is enabled and covers the operation's method
// (an absent methods list retries every method), else 1. A policy hop sends
// nothing; an embedded one's edge is counted at its own hop. A max_attempts
// beyond the schema's bound is IDL002's finding and counts 1 here.
func attempts(h chain.Hop) int {
	r := h.Doc.Retry
	if h.Kind == boundary.Adapter || !r.OK() || !r.Enabled.Value || !r.MaxAttempts.OK() || r.MaxAttempts.Value < 2 || r.MaxAttempts.Value > maxAttempts {
		return 1
	}
	if r.Methods.OK() && r.Methods.Len() > 0 {
		if !h.Doc.ListsFold(r.Methods, h.Op.Method.Value) {
			return 1
		}
	}
	return int(r.MaxAttempts.Value)
}

// maxAttempts is the schema's bound on http_retry.max_attempts.
const maxAttempts = 100
