// Package conform proves that a running service honours the idempotency
// policy it declares (spec section 5): it sends the probes CF01-CF13 to a
// target built from an adapter policy and reports each as pass, fail (with
// what the policy demands, what came back and a diff of the bodies) or
// skip (the policy makes the probe inapplicable). "idemlint conform" is
// its command line; with --reference it probes the reference engine in
// process (InProcess), where every probe passes.
//
// # Probes
//
// The probes run one after another in id order; only CF07 sends requests
// at once. They probe one state-changing operation (Config.Operation, or
// the policy's first key-required one); CF08 needs a second
// state-changing operation and CF09 a read-only one outside require_key.
// CF02's answer is what CF03 replays and CF04 checks, and its "id" member
// fills the path parameters ({id}) of every later probe, so that a read
// of /orders/{id} finds the order CF02 created.
//
// What the probes take as a replay: the same status and body, byte for
// byte, with the policy's replayed_header set to "true" when it declares
// one. What they take as evidence of a replay where none may be (CF08,
// CF11, CF13): that header, or the same status and non-empty body. Conform
// therefore assumes that two executions never answer one body; a real
// result carries something fresh, such as a new id.
//
// # Payloads
//
// Each probe uses fresh UUIDv4 keys, sent bare (CF12 resends one quoted,
// as an RFC 8941 Structured Field String). Its body is the operation's
// example body (or Config.Body), an object, with the member
// "idemlint_probe_nonce": "<uuidv4>" (NonceField) added, fresh for every
// fresh payload: no two probes can ever send one payload, so a target
// cannot answer a probe with another probe's stored response, whatever it
// keys its records on. A probe that needs a body skips when the example
// body is not an object. Some probes add one more member: CF06
// "idemlint_probe_n" (1, re-spelt 1.0) when the body has no integer of its
// own to re-spell, CF10 "idemlint_probe_amount" (100, then "100") and CF11
// "idemlint_probe_big" (9007199254740993, then 9007199254740992, written
// as those digits: no float64 is involved). Every request carries the
// policy's tenant and actor headers (scope_sources) with the values
// TenantA and Actor; CF13's second request comes from TenantB.
//
// # Effects
//
// With Config.EffectsURL (or Config.Effects in process), a counter of real
// executions read before and after each probe, the probes also check how
// much it grew: by one for a fresh execution, by none for a refusal or a
// replay, by exactly one over CF07's whole burst. This sees a double
// execution that identical replayed bodies would hide.
//
// # Bounds and safety
//
// Every request has a timeout; one that may wait on an attempt in flight
// gets at least the policy's wait_timeout_ms plus 2s. The whole run has a
// deadline; the probes left when it passes fail without sending anything.
// The number of requests (Bounds.MaxRequests), the concurrency and the
// timeouts are known before the run and printed by the writers. A
// response body is read up to MaxResponseBytes; a larger one fails the
// probe. Redirects are never followed: a 3xx is the answer the probe
// observes, so no request ever reaches a host other than the target's
// and the effects URL's. No proxy is used, TLS certificates are verified
// unless Config.Insecure, and net/http never resends a request by itself.
// The values of extra headers (Config.Headers) are replaced by
// "<redacted>" in every result, log line and output format. A target that
// hangs, resets connections or answers garbage fails its probes; the run
// still ends within its deadline.
package conform
