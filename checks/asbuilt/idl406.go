package asbuilt

import (
	"fmt"
	"strings"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL406 recomputes the chain's timing rules with what the proxies do.
var IDL406 = checks.Register(&checks.Rule{
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
		type factor struct {
			n       int // attempts in all; limit+1 for "without limit"
			at      Pos
			asBuilt bool
			what    string
		}
		seen := map[string]bool{}
		once := func(key string) bool {
			if seen[key] {
				return false
			}
			seen[key] = true
			return true
		}
		for _, c := range checks.ChainGraph.Of(p).Chains {
			var factors []factor
			var tightest *Retry
			for _, h := range c.Hops {
				if !h.Kind.IsEdge() || h.Op == nil || !h.Op.Method.OK() || !h.Op.Path.OK() {
					continue
				}
				method := h.Op.Method.Value
				b := d.Set.Bind(h.Doc.To.Value, nil)
				carried := b.Hops(method, h.Op.Path.Value)
				var rs []Retry
				var names []string
				for _, hop := range carried {
					res := hop.Route.Resource
					rs = append(rs, hop.Retry)
					names = append(names, fmt.Sprintf("%s %s/%s", res.Kind, res.Namespace, res.Name.Value))
				}
				if len(b.Resources) == 0 && len(b.Ambiguous) == 0 && d.Mesh == IstioMesh && h.Kind != boundary.BrowserToBFF {
					rs = append(rs, d.Set.IstioDefaultRetry(Pos{File: h.Doc.Path, Line: 1, Column: 1}))
					names = append(names, "Istio's default retry of "+h.Endpoints())
				}
				if len(rs) == 0 {
					if declared := h.Doc.Retry; retries(h.Doc, method) {
						n := 1
						if declared.MaxAttempts.OK() {
							n = int(declared.MaxAttempts.Value)
						}
						pl := h.Doc.Place(declared.Pos)
						factors = append(factors, factor{n: n, at: Pos{File: h.Doc.Path, Line: pl.Line, Column: pl.Column}, what: "the edge " + h.Endpoints()})
					}
					continue
				}
				for i, r := range rs {
					if !r.Retries() {
						continue
					}
					if !r.AttemptsKnown {
						if at := r.AttemptsFrom.At; once("unknown " + at.String()) {
							p.ReportAt(at.File, at.Line, at.Column, "", "%s retries %s on %s without saying how often (%s): write the attempts down (retry.attempts), so that the chain's retries can be counted",
								names[i], c.Operation, h.Endpoints(), r.AttemptsFrom.Default.Source)
						}
						continue
					}
					n := r.Attempts
					if n == 0 {
						n = limit + 1
					}
					factors = append(factors, factor{n: n, at: r.AttemptsFrom.At, asBuilt: true, what: names[i]})
					if r.PerTryTimeout > 0 && (tightest == nil || r.PerTryTimeout < tightest.PerTryTimeout) {
						tightest = &rs[i]
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
					parts = append(parts, fmt.Sprintf("%s %d", f.what, f.n))
				}
				if once(fmt.Sprintf("product %s %d", top.at, product)) {
					p.ReportAt(top.at.File, top.at.Line, top.at.Column, "", "%s: as built, one request reaches the owner up to %d times (%s), above the limit of %d: retry at one layer and lower the others",
						c.Name, product, strings.Join(parts, " x "), limit)
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
					c.Name, wait.Value, perTry)
				f.Relate(c.Last().Doc, wait.Pos, "the owner's wait_timeout_ms")
			}
		}
	},
})
