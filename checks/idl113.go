package checks

// IDL113 warns about an owner policy whose records live in one process.
var idl113 = &Rule{
	ID:       "IDL113",
	Name:     "shared-store",
	Severity: Warning,
	Summary:  "idempotency_storage.backend is not memory: records in one process are lost on restart and not shared by replicas",
	Doc: `At-most-once holds only while every replica of the adapter sees the same
records. A memory store keeps them in one process: a second replica behind
the load balancer has its own, so a retry that lands there executes the
operation again, and a restart or a deploy forgets every record at once.
"memory" is fine for a demo or a test; a service needs a store its replicas
share ("redis" and "postgres" are the ones "idemlint serve --store" runs;
any other name, such as "dynamodb", is taken as shared).

Reported (as a warning) at idempotency_storage.backend when it is "memory".

Fix: declare the shared store the adapter uses, e.g.
  "idempotency_storage": {"tier": "billing", "ttl": "14d", "backend": "postgres"}`,
	CheckDocument: func(p *DocumentPass) {
		if pol := p.Doc.Policy; pol != nil && pol.Storage.Backend.Value == "memory" {
			p.Report(pol.Storage.Backend.Pos, `declare the shared store the adapter's replicas use (e.g. "redis" or "postgres") instead of "memory": records in one process are lost on restart, and a retry reaching another replica executes again`)
		}
	},
}
