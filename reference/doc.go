// Package reference is the reference idempotency engine: the executable
// form of an adapter policy (docs/engine.md). It runs as a library
// (Engine.Handle, independent of any server), as net/http middleware
// (Engine.Middleware), and behind "idemlint serve" as a local stand-in
// adapter in front of a Demo handler; "idemlint conform --reference"
// probes it in process.
//
// # Configuration
//
// An engine is built from a policy document, never from flags: an adapter
// document, or a gateway_to_adapter document with an embedded adapter
// policy. New runs every per-document check on it, exactly as "idemlint
// check" does, and refuses any error finding with an *InvalidPolicyError;
// it also refuses what the engine itself cannot run (a missing section,
// an unparsable ttl, a key pattern Go's regexp cannot compile), naming the
// rule that demands it. Warnings are logged.
//
// # Service model
//
// A record is one logical execution attempt in one of three states,
// processing, completed or failed, with only processing -> completed and
// processing -> failed allowed (State.CanBecome). The Store interface
// offers exactly the atomic primitives this needs: create-if-absent with a
// fresh attempt token and a lease, renewal of the lease, the transition
// out of processing, release of a processing record, and get; all but
// create and get need the current token, so a worker whose attempt was
// taken over can never change the new attempt's record. Times come from
// the store's clock. MemoryStore is the default Store; package storetest
// is the conformance suite every Store passes.
//
// # Leases
//
// The engine renews the lease (idempotency_inflight.lease_ms) every third
// of it while the handler runs, so a record lapses only when its worker
// died, or when the store stopped answering for about as long as the lease;
// the next duplicate then takes the key over and executes. The handler's
// context does not end when the client goes away (a client's timeout must
// not become a stored failure); it ends at shutdown (WithBaseContext),
// with cause ErrLeaseLost when another attempt took the key over, and
// with cause ErrLeaseLapsed when the lease lapsed unrenewed. AttemptToken
// gives the handler its attempt's token, to fence its downstream writes.
// A handler that exits without returning (runtime.Goexit), or that fails
// after shutdown cut it, releases the key. If recording the end fails,
// the engine retries in the background while the lease lasts, answers the
// client anyway, and logs it; Drain waits for those retries at shutdown.
//
// A store that is an AttemptBinder (pgstore) lets the handler write in
// the attempt's own transaction, committed with the completed record;
// when the two cannot commit together the client gets 503
// idempotency_record_not_committed instead of the handler's answer.
//
// Identity is the policy's idempotency_scope minus "fingerprint": the
// service, operation_key, contract_version, tenant (read from the
// tenant_id source of scope_sources), actor and key, each only when the
// scope names it, length-prefixed so that no two tuples encode alike.
// Two tenants therefore never share a record. The fingerprint is stored in
// the record and compared instead of being part of the lookup: with it in
// the key, a key reused for another payload would find no record and
// silently execute a second time, and the conflict the policy's
// on_payload_mismatch describes could never be detected. Listing
// "fingerprint" in the scope thus means that uniqueness covers it: one
// (identity, fingerprint) pair, one attempt.
//
// # Fingerprint
//
// The fingerprint is "<algorithm>:<hex>", the declared hash of one RFC
// 8785 canonical JSON object with a member per declared input, e.g.
//
//	{"body":{...},"header:x-client":"web","method":"POST","path":"/orders","query":{"a":["1"]}}
//
// so key order, whitespace, number spelling (1, 1.0, 1e0) and string
// escapes do not change it, while a change of JSON type ("100" versus 100)
// does: nothing is coerced. An absent header is null; the query maps each
// name to its values in the order sent; with canonicalization raw_bytes
// the body is its bytes as sent, base64-encoded, and exclude_fields does
// not apply. The body is canonicalised with jcs.CanonicalizeExact, which
// writes an integer beyond 2^53-1 with its exact digits where plain RFC
// 8785 would round it onto a neighbouring double, and so replay one
// client's response to another (9007199254740993 versus
// 9007199254740992). A body that is not I-JSON (invalid JSON, duplicate
// names, lone surrogates, numbers out of double range) is refused with 400
// payload_not_canonicalizable, as is an input that is not valid UTF-8. An
// empty body is the JSON null.
//
// A policy may name its canonicalization per request media type
// ({"application/json": "canonical_json",
// "application/x-www-form-urlencoded": "canonical_form"}, "*/*" for any
// other). A body is then read by its Content-Type, parameters and case
// ignored (none is application/octet-stream); a body of a type the policy
// does not name is refused with 415 unsupported_media_type before the
// store is asked, and the body member names the canonicalization used,
// {"canonical_form":"a=1&b=2"}, so that one body read two ways is two
// payloads. canonical_form decodes the pairs ("+" a space, %XX a byte,
// UTF-8 or 400), sorts them by name in byte order keeping the order of one
// name's values, and spells them again with the RFC 3986 unreserved
// characters as they are and every other byte as %XX; an exclude_fields
// entry "/NAME" drops every pair of that name.
//
// Canonicalisation is most of the cost of a replay, and a retry usually
// resends the very bytes of its first attempt. Each record therefore also
// keeps a SHA-256 of the raw inputs (Record.RawDigest); a duplicate whose
// raw digest equals the live record's has, necessarily, its fingerprint,
// and is not canonicalised again.
//
// # Key
//
// The key is read from the policy's key header. The IETF draft sends it
// as a Structured Field String ("abc", quoted); the bare and the quoted
// spelling of one value are the same key. A missing, repeated, malformed,
// too long (key_format.max_length characters) or non-matching
// (key_format.pattern) key is answered with on_missing's status and
// error_code. Handle documents which requests need a key at all.
//
// # HTTP contract
//
// Every answer the engine makes up is RFC 9457 application/problem+json
// with an error_code member. A duplicate of a completed attempt replays
// the stored status and body byte for byte, and the stored headers that
// describe the body or the result (Content-Type,
// Content-Encoding, Content-Language, Content-Location, Location); the
// policy's replayed_header is set to "true" on replays only, and with
// echo_key_header every answer to a request with a valid key carries the
// key header back as it was sent. A duplicate with another fingerprint
// gets on_payload_mismatch, whatever the state of the record. A
// duplicate of a running attempt is rejected with idempotency_inflight's
// status and error_code idempotency_request_in_progress, or under "wait"
// blocks (woken by the attempt when it ran in this process, polling the
// store otherwise) until the attempt ends, and then replays it, or until
// wait_timeout_ms, and then gets that same answer.
//
// A handler that returns an error, panics or answers 500 or more fails
// the attempt (a panic is answered 500 handler_panic and logged, never
// crashing the server); 2xx, 3xx and 4xx complete it. Under on_failed
// "stored_response" duplicates replay the failure; under "reexecute" the
// failed attempt releases its record and the next duplicate runs the
// handler again.
//
// Records expire ttl (idempotency_storage) after they finished; an
// expired identity starts afresh. A memory store holding max_records
// records, or max_bytes bytes of them (their keys, fingerprints and
// stored responses, estimated), refuses a new identity with 503
// idempotency_store_full and Retry-After, rather than evict a live
// record; when the scope holds tenant_id, so does a tenant holding
// max_tenant_percent (default 25) of either, so that one tenant cannot
// refuse every other's new keys. The memory store's clock is injectable (WithClock).
package reference
