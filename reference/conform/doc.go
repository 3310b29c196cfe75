// Package conform proves that a running service honours the idempotency
// policy it declares (docs/probes.md): it sends the probes
// CF01-CF19 to one target, or to several replicas, built from an adapter
// policy and reports each as pass, fail (with what the policy demands,
// what came back, a hint and a diff of the JSON values) or skip (the
// policy makes the probe inapplicable, or the target left it
// unjudgeable). "idemlint conform" is its command line; with --reference
// it probes the reference engine in process (InProcess), where every
// applicable probe passes.
//
// # The policy as written
//
// Conform probes the policy a team wrote, lint errors and all: what it
// reads of the model is gathered in one place (readContract), and each
// probe that needs a section the policy lacks skips, naming the field.
// The caller shows the policy's lint findings as notes
// (Config.PolicyFindings).
//
// # Probes
//
// Each probe is a documented value, like a lint rule: a Probe, one file
// cfNN.go each, saying why it matters, what it sends, when it passes and
// when it is skipped. Probes lists them ("idemlint probes") and
// Probe.Explain explains one ("idemlint explain CF07").
//
// The probes run one after another in id order; only CF07 and CF18 send
// requests at once. They probe one state-changing operation
// (Config.Operation, or the policy's first key-required one); CF08 needs
// a second state-changing operation and CF09 a read-only one outside
// require_key. CF02's answer is what CF03 replays and CF04 and CF16
// check, CF14 checks the refusals CF01 and CF05 received, and CF02's "id"
// member fills the path parameters ({id}) of every later probe, so that a
// read of /orders/{id} finds the order CF02 created.
//
// What the probes take as a replay: the same status and body, byte for
// byte (as idempotency_replay declares); the replay marker is CF16's
// alone, so one defect fails one probe. What they take as evidence of a
// replay where none may be (CF08, CF11, CF13, CF17): the marker, or the
// same status and non-empty body. Conform therefore assumes that two
// executions never answer one body; a real result carries something
// fresh, such as a new id. CF11, CF13 and CF17 skip when no earlier probe
// saw the target replay at all: against a target that never replays, a
// fresh answer proves nothing.
//
// With several targets (replicas behind no balancer), fresh requests take
// them in turn and every duplicate goes to another target than its first
// request; CF18 checks that a key completed on one replica is not
// executed again by the next and that a burst spread over all executes
// once. It judges executions only: answers that break the inflight or
// replay policy are CF07's and CF03's concern, and without an
// effects counter a non-2xx answer is not counted as an execution, which
// its Note says. CF13 and CF17 note that they probe the target alone: a
// pass says nothing about the hops in front of it, which must forward the
// scope headers.
//
// CF19 (docs/probes.md, The browser's preflight: CF19) sends the CORS
// preflight a browser on Config.Origin
// sends before the operation, to the first target only: the
// browser-facing URL. It is skipped without an origin, and in process,
// where no proxy answers preflights.
//
// # Payloads
//
// Each probe uses fresh UUIDv4 keys, sent bare (CF12 resends one quoted,
// as an RFC 8941 Structured Field String). Its body is the operation's
// example body (or Config.Body), an object ({} when the example body is
// not one, with a note), with the member "idemlint_probe_nonce":
// "<uuidv4>" (NonceField) added, fresh for every fresh payload: no two
// probes can ever send one payload, so a target cannot answer a probe with
// another probe's stored response, whatever it keys its records on. Some
// probes add one more member: CF06 "idemlint_probe_n" (1, re-spelt 1.0)
// when the body has no integer of its own to re-spell, CF10
// "idemlint_probe_amount" (100, then "100") and CF11 "idemlint_probe_big"
// (9007199254740993, then 9007199254740992, written as those digits: no
// float64 is involved). Every request carries the policy's tenant and
// actor headers (scope_sources) with the values TenantA and ActorA; CF13's
// second request comes from TenantB, CF17's from ActorB.
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
// Before the probes, one GET to each target and to the effects URL must
// get an HTTP answer within the request timeout, or Run returns an error
// and probes nothing. Every request has a timeout; one that may wait on an
// attempt in flight gets at least the policy's wait_timeout_ms plus 2s.
// The whole run has a deadline; the probes left when it passes fail
// without sending anything. The number of requests (Bounds.MaxRequests),
// the concurrency, the timeouts and the body limit are known before the
// run and printed by the writers. Response headers are read up to
// MaxResponseHeaderBytes and bodies up to bodyLimit (MaxResponseBytes, or
// less at a high concurrency); a larger answer fails the probe. Redirects
// are never followed: a 3xx is the answer the probe observes, so no
// request ever reaches a host other than the targets' and the effects
// URL's. No proxy is used, TLS certificates are verified unless
// Config.Insecure, and net/http never resends a request by itself.
//
// The values of extra headers (Config.Headers) are secrets: at least
// MinSecretLength characters, and replaced by "<redacted>" in every
// result, log line and output format, in whatever spelling a target
// echoes them (see redactor). A target that hangs, resets connections or
// answers garbage fails its probes; the run still ends within its
// deadline.
package conform
