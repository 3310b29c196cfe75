package chain

import (
	"strings"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// List is one header allowlist the key crosses at a hop.
type List struct {
	Field   string // "cors_allowed_headers", "header_to_allow_inbound" or "header_to_allow_outbound"
	Headers Names
}

// lists returns, in buf, the allowlists the key crosses at h, in the
// order it meets them: the browser's CORS preflight and the BFF's inbound
// list on the browser edge; the sender's outbound and the receiver's
// inbound list on the other edges; and the adapter's own inbound list when
// its document declares one (it is optional there, so an absent one
// filters nothing). A policy embedded in an edge has no lists of its own:
// the edge's apply. The chain rules ask every hop of every chain: a slice
// per question was most of what they allocated.
func (h Hop) lists(buf *[2]List) []List {
	d := h.Doc
	switch {
	case h.Kind == boundary.BrowserToBFF:
		*buf = [2]List{{"cors_allowed_headers", d.CORSAllowedHeaders}, {"header_to_allow_inbound", d.HeaderAllowInbound}}
		return buf[:]
	case h.Kind != boundary.Adapter:
		*buf = [2]List{{"header_to_allow_outbound", d.HeaderAllowOutbound}, {"header_to_allow_inbound", d.HeaderAllowInbound}}
		return buf[:]
	case !h.Embedded() && d.HeaderAllowInbound.OK():
		buf[0] = List{"header_to_allow_inbound", d.HeaderAllowInbound}
		return buf[:1]
	}
	return nil
}

// Drops returns the lists of h that do not let header through, nil when
// all do. An edge list that is absent drops it: the key must appear
// there (docs/format.md, Header allowlists).
func (h Hop) Drops(header string) []List {
	var lists [2]List
	var drops []List
	for _, l := range h.lists(&lists) {
		if !h.Doc.Allows(l.Headers, header) {
			drops = append(drops, l)
		}
	}
	return drops
}

// Owner reports whether the hop owns the key: a policy embedded in an edge
// always does (docs/format.md, Owner policy), an adapter document when its role is "owner".
func (h Hop) Owner() bool {
	if h.Kind != boundary.Adapter {
		return false
	}
	return h.Embedded() || h.Doc.Idempotency.Role.Value == "owner"
}

// RequiresKey reports whether the hop rejects its operation without a key.
// An embedded policy's requirement is the enclosing edge's, which is the
// same document's http_idempotency.
func (h Hop) RequiresKey() bool { return h.Doc.Requires(h.Op) }

// Fate is what happens to a chain's key at one hop.
type Fate uint8

// The fates, good ones first. A hop of a state-changing chain whose fate
// is Broken is where the key stops doing its job.
const (
	Required    Fate = iota + 1 // browser edge: the key must be sent
	Forwarded                   // BFF or gateway edge: the key passes
	Owned                       // adapter policy: the key is required and owned here
	Dropped                     // an allowlist of the hop drops the key
	NotRequired                 // browser edge or owner: a keyless request is accepted
	NotOwned                    // adapter document whose role is not "owner"
)

var fateNames = [...]string{Required: "required", Forwarded: "forwarded", Owned: "owned", Dropped: "dropped", NotRequired: "not required", NotOwned: "not owned"}

func (f Fate) String() string { return fateNames[f] }

// Broken reports whether the fate breaks a state-changing chain.
func (f Fate) Broken() bool { return f >= Dropped }

// HopFate is the fate of the key at one hop, with the lists that drop it.
type HopFate struct {
	Fate  Fate
	Drops []List // when Fate is Dropped
}

// FateAt computes the key's fate at hop i of c.
func (c *Chain) FateAt(i int) HopFate {
	h := c.Hops[i]
	if drops := h.Drops(c.KeyHeader()); len(drops) > 0 {
		return HopFate{Fate: Dropped, Drops: drops}
	}
	switch h.Kind {
	case boundary.BrowserToBFF:
		if !h.RequiresKey() {
			return HopFate{Fate: NotRequired}
		}
		return HopFate{Fate: Required}
	case boundary.Adapter:
		switch {
		case !h.Owner():
			return HopFate{Fate: NotOwned}
		case !h.RequiresKey():
			return HopFate{Fate: NotRequired}
		}
		return HopFate{Fate: Owned}
	}
	return HopFate{Fate: Forwarded}
}

// Detail explains a broken fate for the chain's key header, e.g.
// "header_to_allow_outbound lacks x-idempotency-key"; "" otherwise.
func (f HopFate) Detail(header string) string {
	switch f.Fate {
	case Dropped:
		parts := make([]string, len(f.Drops))
		for i, l := range f.Drops {
			if !l.Headers.OK() {
				parts[i] = "no " + l.Field
			} else {
				parts[i] = l.Field + " lacks " + header
			}
		}
		return strings.Join(parts, "; ")
	case NotRequired:
		return "http_idempotency.require_key does not cover the operation"
	case NotOwned:
		return `http_idempotency.role is not "owner"`
	}
	return ""
}

// Broken reports whether the key does not make it along c: the chain stops
// short of an adapter policy, or some hop's fate is broken.
func (c *Chain) Broken() bool {
	if !c.Complete() {
		return true
	}
	for i := range c.Hops {
		if c.FateAt(i).Fate.Broken() {
			return true
		}
	}
	return false
}
