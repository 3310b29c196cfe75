package checks

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// IDL111 checks that idempotency records outlive the retries they guard.
var idl111 = &Rule{
	ID:       "IDL111",
	Name:     "retention-ttl",
	Severity: Error,
	Summary:  "idempotency_storage declares tier and ttl, and ttl meets the tier's minimum unless a reduction is declared",
	Doc: `An idempotency record protects only while it exists. Once its ttl
expires, a late retry (a mobile client coming back online, a queued job, a
user pressing "pay" again on a stale page) finds no record and executes the
operation a second time. So the retention is part of the policy, and its
floor depends on what a double execution costs:
  "default"       ttl >= 24h
  "billing"       ttl >= 7d   (a duplicate charge)
  "irreversible"  ttl >= 7d   (a duplicate that cannot be undone)
The minimums can be changed per tier with "min_ttl" in .idemlint.json.

A shorter ttl is allowed only when it is a decision, not an accident:
"ttl_reduction": {"declared": true, "reason": "..."}. It is then reported as
a warning that shows the reason, so reviewers see it.

Reported: a missing idempotency_storage, tier or ttl, a ttl of zero or
longer than 3650d (what the reference engine can keep), and a ttl below the
tier's minimum without a declared reduction.

Fix: declare, for example,
  "idempotency_storage": {"tier": "billing", "ttl": "14d", "backend": "postgres"}
or raise the ttl; if storage cost forces a shorter one, declare
ttl_reduction with the reason and make sure clients stop retrying before it.`,
	CheckDocument: checkRetention,
}

// checkRetention is IDL111: the storage declares its tier and ttl, and
// the ttl is one a store keeps and meets the tier's minimum.
func checkRetention(p *DocumentPass) {
	pol := p.Doc.Policy
	if pol == nil {
		return
	}
	s := &pol.Storage
	switch s.State {
	case boundary.Absent:
		p.Missing(pol.Pos, "idempotency_storage",
			`add idempotency_storage with "tier" and "ttl", e.g. {"tier": "default", "ttl": "24h"}`)
		return
	case boundary.Invalid:
		return
	}
	if !s.Tier.Present() {
		p.Missing(s.Pos, "tier",
			`add "tier" to idempotency_storage: "default", "billing" or "irreversible"; the tier sets the minimum ttl`)
	}
	minTTL, known := p.Limits.MinTTL[s.Tier.Value]
	if !s.TTL.Present() {
		if known {
			p.Missing(s.Pos, "ttl", `add "ttl" to idempotency_storage: at least %s for tier %q`, humanDuration(minTTL), s.Tier.Value)
		} else {
			p.Missing(s.Pos, "ttl", `add "ttl" to idempotency_storage, e.g. "24h": records must outlive every retry`)
		}
		return
	}
	ttl, ok := checkTTLBounds(p, s)
	if !ok || !known || ttl >= minTTL {
		return
	}
	if s.Reduced() {
		p.Warn(s.TTL.Pos, "ttl %s is below the %s minimum for tier %q by a declared ttl_reduction (%q): make sure no client retries later than %s",
			s.TTL.Value, humanDuration(minTTL), s.Tier.Value, strings.TrimSpace(s.TTLReduction.Reason.Value), s.TTL.Value)
		return
	}
	p.Report(s.TTL.Pos, "raise ttl to at least %s for tier %q or declare ttl_reduction with a reason: a retry after %s executes the operation again",
		humanDuration(minTTL), s.Tier.Value, s.TTL.Value)
}

// checkTTLBounds returns the storage's ttl when it is one a store keeps:
// above zero and at most boundary.MaxTTL; otherwise it reports it and
// returns false. A ttl the schema rejects (not an integer and a unit) is
// its finding, reported by IDL002, not here.
func checkTTLBounds(p *DocumentPass, s *boundary.Storage) (time.Duration, bool) {
	ttl, err := boundary.ParseTTL(s.TTL.Value)
	if !s.TTL.OK() || !ttlSyntax.MatchString(s.TTL.Value) {
		return 0, false
	}
	switch {
	case err == nil && ttl == 0:
		p.Report(s.TTL.Pos, `set ttl above zero, e.g. "24h": with %s every record expires at once and every retry executes again`, s.TTL.Value)
		return 0, false
	case err != nil || ttl > boundary.MaxTTL:
		p.Report(s.TTL.Pos, "set ttl to at most %s: %s is longer than any store keeps a record", humanDuration(boundary.MaxTTL), s.TTL.Value)
		return 0, false
	}
	return ttl, true
}

// ttlSyntax is the schema's duration pattern: values it rejects are IDL002's.
var ttlSyntax = regexp.MustCompile(`^[0-9]+[smhdw]$`)

// humanDuration writes d the way a retention is written in a policy: in
// whole days from two days up ("7d"), else whole hours ("24h", as the
// documentation writes a day), minutes or seconds, falling back to Go's notation.
func humanDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d >= 2*day && d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}
