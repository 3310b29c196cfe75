package asbuilt

import (
	"fmt"
	"strings"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/chain"
)

// IDL406 recomputes the chain's timing rules with what the proxies do.
var IDL406 = &checks.Rule{
	ID:       "IDL406",
	Name:     "as-built-timing",
	Severity: checks.Warning,
	Requires: []checks.Input{Config, checks.ChainGraph},
	Summary:  "as-built timing: retry amplification (IDL208) and the owner's wait against per-try timeouts (IDL213) recomputed with the as-built retries; attempts left to the implementation",
	Doc: `IDL208 and IDL213 judge the retries the boundary documents declare. The
proxies that carry the hops decide how often one request is really sent
and how long each attempt may take: an Istio route with 4 retries behind a
BFF that retries twice multiplies one click by 15, whatever the edges say,
and an adapter that holds a duplicate longer than a proxy's per-try timeout
stacks waiters exactly when it is slow.

Recomputed over each chain with, for every hop, the retries of the routes
that carry it as built (several proxies on one hop multiply), else what its
edge declares (Istio's default under --mesh istio):
- the product of attempts in all above the limit of IDL208 (10 unless
  configured), reported at the as-built attempts that contribute most;
- an inflight wait_timeout_ms not below the smallest as-built per-try
  timeout on the chain, reported at that timeout, the policy related;
- a retry whose number of attempts is implementation-specific (a Gateway
  API retry without attempts), reported at that retry.

Fix: retry at one layer and write the attempts down; keep per-try timeouts
above the owner's wait_timeout_ms.`,
	CheckSet: func(p *checks.SetPass) {
		d := Config.Of(p)
		limit := p.Limits.MaxRetryAmplification
		if limit < 1 {
			limit = checks.DefaultLimits().MaxRetryAmplification
		}
		// A factor is one hop's attempts in all; what it is, worded only
		// for a finding: most chains have none.
		type factor struct {
			n        int // attempts in all; limit+1 for "without limit"
			at       Pos // where the as-built attempts are written
			hop      chain.Hop
			resource *Resource // the route's; nil for the mesh's default or the edge
			asBuilt  bool
		}
		what := func(f factor) string {
			switch {
			case f.resource != nil:
				return fmt.Sprintf("%s %s/%s", f.resource.Kind, f.resource.Namespace, f.resource.Name.Value)
			case f.asBuilt:
				return "Istio's default retry of " + f.hop.Endpoints()
			}
			return "the edge " + f.hop.Endpoints()
		}
		// The mesh's default retry of each edge: chains share edges.
		meshDefault := map[*chain.Facts]*Retry{}
		meshDefaults := func(doc *chain.Facts, b Binding) *Retry {
			if d.Mesh != IstioMesh {
				return nil
			}
			r, ok := meshDefault[doc]
			if !ok {
				r = d.meshDefault(doc, b)
				meshDefault[doc] = r
			}
			return r
		}
		seen := map[string]bool{}
		once := func(key string) bool {
			if seen[key] {
				return false
			}
			seen[key] = true
			return true
		}
		var factors []factor // of one chain; reused
		for _, c := range checks.ChainGraph.Of(p).Chains {
			factors = factors[:0]
			var tightest *Retry
			for _, h := range c.Hops {
				if !h.Kind.IsEdge() || h.Op == nil || !h.Op.Method.OK() || !h.Op.Path.OK() {
					continue
				}
				method := h.Op.Method.Value
				b := d.bind(h.Doc)
				carried := b.Hops(method, h.Op.Path.Value)
				if r := meshDefaults(h.Doc, b); r != nil {
					carried = append(carried, Hop{Retry: *r})
				}
				if len(carried) == 0 {
					if declared := h.Doc.Retry; retries(h.Doc, method) {
						n := 1
						if declared.MaxAttempts.OK() {
							n = int(declared.MaxAttempts.Value)
						}
						factors = append(factors, factor{n: n, hop: h})
					}
					continue
				}
				for i := range carried {
					r := &carried[i]
					if !r.Retry.Retries() {
						continue
					}
					f := factor{at: r.Retry.AttemptsFrom.At, hop: h, asBuilt: true}
					if r.Route != nil {
						f.resource = r.Route.Resource
					}
					if !r.Retry.AttemptsKnown {
						if once("unknown " + f.at.String()) {
							p.ReportAt(f.at.File, f.at.Line, f.at.Column, "", "%s retries %s on %s without saying how often (%s): write the attempts down (retry.attempts), so that the chain's retries can be counted",
								what(f), c.Operation(), h.Endpoints(), r.Retry.AttemptsFrom.Default.Source)
						}
						continue
					}
					f.n = r.Retry.Attempts
					if f.n == 0 {
						f.n = limit + 1
					}
					factors = append(factors, f)
					if r.Retry.PerTryTimeout > 0 && (tightest == nil || r.Retry.PerTryTimeout < tightest.PerTryTimeout) {
						tightest = &r.Retry
					}
				}
			}
			product, most := 1, -1
			for i, f := range factors {
				product = min(product*f.n, 1<<30)
				if most < 0 || f.n > factors[most].n {
					most = i
				}
			}
			if product > limit && most >= 0 && factors[most].asBuilt {
				top := factors[most]
				var parts []string
				for _, f := range factors {
					parts = append(parts, fmt.Sprintf("%s %d", what(f), f.n))
				}
				if once(fmt.Sprintf("product %s %d", top.at, product)) {
					p.ReportAt(top.at.File, top.at.Line, top.at.Column, "", "%s: as built, one request reaches the owner up to %d times (%s), above the limit of %d: retry at one layer and lower the others",
						c.Name(), product, strings.Join(parts, " x "), limit)
				}
			}
			pol := c.Last().Doc.Policy
			if !c.Complete() || pol == nil || tightest == nil || pol.Inflight.Policy.Value != "wait" || !pol.Inflight.WaitTimeoutMS.OK() {
				continue
			}
			wait := pol.Inflight.WaitTimeoutMS
			perTry := tightest.PerTryTimeout.Milliseconds()
			if at := tightest.PerTryTimeoutFrom.At; wait.Value >= perTry && once("wait "+at.String()) {
				f := p.ReportAt(at.File, at.Line, at.Column, "", "%s: the owner holds a duplicate up to wait_timeout_ms %d, not below this per-try timeout of %d ms: the proxy gives up on the waiting duplicate and sends another, and waiters stack up; raise the per-try timeout above the wait, or lower wait_timeout_ms",
					c.Name(), wait.Value, perTry)
				f.Relate(c.Last().Doc, wait.Pos, "the owner's wait_timeout_ms")
			}
		}
	},
}
