package checks

import (
	"strconv"
	"strings"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// requiredScope is the uniqueness tuple of an idempotency record, in the
// documented order (docs/format.md, Owner policy), and so of IDL107's
// messages.
var requiredScope = []string{"service", "operation_key", "contract_version", "tenant_id", "actor_id", "fingerprint", "idempotency_key"}

// IDL107 checks that a stored response can only be replayed to the request
// it belongs to.
var idl107 = &Rule{
	ID:       "IDL107",
	Name:     "scope-complete",
	Severity: Error,
	Summary:  "idempotency_scope holds service, operation_key, contract_version, tenant_id, actor_id, fingerprint and idempotency_key",
	Doc: `An idempotency key is chosen by the client, so it is unique only for
that client and that action. The adapter's record must therefore be keyed by
the whole scope:
  service, operation_key, contract_version  - the same key sent to another
      service, operation or contract version is a different request;
  tenant_id, actor_id  - without them, one tenant (or user) that happens to
      send, or deliberately replays, another's key receives the other
      tenant's stored response: a data leak;
  fingerprint  - the same key with a different payload is a conflict, not a
      retry;
  idempotency_key  - the key itself.

Reported: a missing idempotency_scope, and one finding listing every missing
member.

Fix: declare
  "idempotency_scope": ["service", "operation_key", "contract_version",
    "tenant_id", "actor_id", "fingerprint", "idempotency_key"]
and, if tenant and actor do not come from x-tenant-id and x-actor-id, say
where they come from in scope_sources.`,
	CheckDocument: func(p *DocumentPass) {
		pol := p.Doc.Policy
		if pol == nil {
			return
		}
		scope := pol.Scope
		switch scope.State {
		case boundary.Absent:
			p.Missing(pol.Pos, "idempotency_scope", "add idempotency_scope: [%s]", quoteAll(requiredScope))
			return
		case boundary.Invalid:
			return // IDL002 reports the type.
		}
		var missing []string
		for _, member := range requiredScope {
			if !scope.Contains(member) {
				missing = append(missing, member)
			}
		}
		if len(missing) > 0 {
			p.Report(scope.Pos, "add %s to idempotency_scope: a record must be unique per service, operation, contract version, tenant, actor, payload and key, or one request is answered with another's stored response", quoteAll(missing))
		}
	},
}

// quoteAll renders names as a comma-separated list of JSON strings.
func quoteAll(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	return strings.Join(quoted, ", ")
}
