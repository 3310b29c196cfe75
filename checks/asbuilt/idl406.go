package asbuilt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/chain"
)

// IDL406 recomputes the chain's timing rules with what the proxies do.
var idl406 = &checks.Rule{
	ID:       "IDL406",
	Name:     "as-built-timing",
	Severity: checks.Warning,
	Requires: []checks.Input{Config, carried, checks.ChainGraph},
	Summary:  "as-built timing: retry amplification (IDL208) and the owner's wait against per-try timeouts (IDL213) recomputed with the as-built retries; attempts left to the implementation",
	Doc: `IDL208 and IDL213 judge the retries the boundary documents declare. The
proxies that carry the hops decide how often one request is really sent
and how long each attempt may take: an Istio route with 4 retries behind a
BFF that retries twice multiplies one click by 15, whatever the edges say,
and an adapter that holds a duplicate longer than a proxy's per-try timeout
stacks waiters exactly when it is slow.

Recomputed over each chain with, for every hop, the largest attempts of the
routes that carry it as built (several routes on one hop are alternatives:
one of them carries a given request), else what its edge declares (Istio's
default under --mesh istio); a route that resends only what was never
sent (ingress-nginx's POST, connection errors) passes each request on once:
- the product of attempts in all above the limit of IDL208 (10 unless
  configured), reported at the as-built attempts that contribute most;
- an inflight wait_timeout_ms not below the smallest as-built per-try
  timeout on the chain, reported at that timeout, the policy related;
- a retry whose number of attempts is implementation-specific (a Gateway
  API retry without attempts), reported at that retry.

Fix: retry at one layer and write the attempts down; keep per-try timeouts
above the owner's wait_timeout_ms.`,
	CheckSet: func(p *checks.SetPass) {
		t := &timing{p: p, c: carried.Of(p), limit: p.Limits.MaxRetryAmplification, seen: map[string]bool{}}
		if t.limit < 1 {
			t.limit = checks.DefaultLimits().MaxRetryAmplification
		}
		for _, c := range checks.ChainGraph.Of(p).Chains {
			if !t.c.carries(c) {
				continue // as declared: IDL208's and IDL213's
			}
			factors, tightest := t.factors(c)
			t.amplification(c, factors)
			t.perTryBelowWait(c, tightest)
		}
	},
}

// timing is one run of IDL406 over a set's chains.
type timing struct {
	p     *checks.SetPass
	c     *carriage
	limit int
	// seen are the places reported, each once however many chains pass.
	seen map[string]bool
}

// factor is one hop's attempts in all.
type factor struct {
	n        int // attempts in all; limit+1 for "without limit"
	at       Pos // where the as-built attempts are written
	hop      chain.Hop
	resource *Resource // the route's; nil for the mesh's default or the edge
	asBuilt  bool
}

// what names where a factor comes from, for the finding.
func (f factor) what() string {
	switch {
	case f.resource != nil:
		return resourceName(f.resource)
	case f.asBuilt:
		return "Istio's default retry of " + f.hop.Endpoints()
	}
	return "the edge " + f.hop.Endpoints()
}

// once reports whether key is met for the first time.
func (t *timing) once(key string) bool {
	if t.seen[key] {
		return false
	}
	t.seen[key] = true
	return true
}

// factors are the attempts of each hop of c, one factor a hop, and the
// as-built retry with the tightest per-try timeout on c. Several
// resources carrying one hop are alternatives (one of them carries a
// given request): the hop's factor is the largest of their attempts,
// never their product. A hop nothing carries as built counts as its
// edge declares.
func (t *timing) factors(c *chain.Chain) (factors []factor, tightest *Retry) {
	for _, h := range c.Hops {
		if !h.Kind.IsEdge() || h.Op == nil || !h.Op.Method.OK() || !h.Op.Path.OK() {
			continue
		}
		carried := t.carried(h)
		if len(carried) == 0 {
			if f, ok := declared(h); ok {
				factors = append(factors, f)
			}
			continue
		}
		var largest *factor
		for i := range carried {
			r := &carried[i]
			f, ok := t.asBuilt(c, h, r)
			if !ok {
				continue
			}
			if largest == nil || f.n > largest.n {
				largest = &f
			}
			if r.Retry.PerTryTimeout > 0 && (tightest == nil || r.Retry.PerTryTimeout < tightest.PerTryTimeout) {
				tightest = &r.Retry
			}
		}
		if largest != nil {
			factors = append(factors, *largest)
		}
	}
	return factors, tightest
}

// carried are the as-built hops of h: the routes bound to its edge, or
// the mesh's default retry.
func (t *timing) carried(h chain.Hop) []Hop {
	routes := t.c.routes(h)
	if r := t.c.meshDefault[h.Doc]; r != nil {
		// Not appended in place: routes is the carriage's, shared.
		return append(slices.Clip(routes), Hop{Retry: *r})
	}
	return routes
}

// declared is the factor of a hop nothing carries as built: its edge's
// max_attempts, when it retries.
func declared(h chain.Hop) (factor, bool) {
	if !retries(h.Doc, h.Op.Method.Value) {
		return factor{}, false
	}
	n := 1
	if m := h.Doc.Retry.MaxAttempts; m.OK() {
		n = int(m.Value)
	}
	return factor{n: n, hop: h}, true
}

// asBuilt is the factor of one as-built hop r of h; false when it does
// not resend a request the next hop received, or does not say how often
// (reported here, at its retry).
func (t *timing) asBuilt(c *chain.Chain, h chain.Hop, r *Hop) (factor, bool) {
	if !r.Retry.Retries() {
		return factor{}, false
	}
	f := factor{at: r.Retry.AttemptsFrom.At, hop: h, asBuilt: true}
	if r.Route != nil {
		f.resource = r.Route.Resource
	}
	if !r.Retry.AttemptsKnown {
		if t.once("unknown " + f.at.String()) {
			t.p.ReportAt(f.at.File, f.at.Line, f.at.Column, "", "%s retries %s on %s without saying how often%s: write the attempts down (retry.attempts) so that the chain's retries can be counted",
				f.what(), c.Operation(), h.Endpoints(), origin(r.Retry.AttemptsFrom))
		}
		return factor{}, false
	}
	if !r.Retry.ResendsAfterReceipt() {
		// Resent only when never sent (nginx's POST, connection errors):
		// the next hop sees the request once.
		return factor{}, false
	}
	f.n = r.Retry.Attempts
	if f.n == 0 {
		f.n = t.limit + 1
	}
	return f, true
}

// amplification reports the product of c's factors above the limit, at
// the as-built factor that contributes most.
func (t *timing) amplification(c *chain.Chain, factors []factor) {
	product, most := 1, -1
	for i, f := range factors {
		product = min(product*f.n, 1<<30)
		if most < 0 || f.n > factors[most].n {
			most = i
		}
	}
	if product <= t.limit || most < 0 || !factors[most].asBuilt {
		return
	}
	top := factors[most]
	parts := make([]string, len(factors))
	for i, f := range factors {
		parts[i] = fmt.Sprintf("%s %d", f.what(), f.n)
	}
	if t.once(fmt.Sprintf("product %s %d", top.at, product)) {
		t.p.ReportAt(top.at.File, top.at.Line, top.at.Column, "", "%s: as built, one request reaches the owner up to %d times (%s), above the limit of %d: retry at one layer and lower the others",
			c.Name(), product, strings.Join(parts, " x "), t.limit)
	}
}

// perTryBelowWait reports an owner that holds a duplicate at least as
// long as the tightest as-built per-try timeout of c.
func (t *timing) perTryBelowWait(c *chain.Chain, tightest *Retry) {
	pol := c.Last().Doc.Policy
	if !c.Complete() || pol == nil || tightest == nil || pol.Inflight.Policy.Value != "wait" || !pol.Inflight.WaitTimeoutMS.OK() {
		return
	}
	wait := pol.Inflight.WaitTimeoutMS
	perTry := tightest.PerTryTimeout.Milliseconds()
	if at := tightest.PerTryTimeoutFrom.At; wait.Value >= perTry && t.once("wait "+at.String()) {
		f := t.p.ReportAt(at.File, at.Line, at.Column, "", "%s: the owner holds a duplicate up to wait_timeout_ms %d, not below this per-try timeout of %d ms: the proxy gives up on the waiting duplicate and sends another, and waiters stack up; raise the per-try timeout above the wait, or lower wait_timeout_ms",
			c.Name(), wait.Value, perTry)
		f.Relate(c.Last().Doc, wait.Pos, "the owner's wait_timeout_ms")
	}
}
