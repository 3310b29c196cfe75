// Package redisstore is a reference.Store on Redis 7.0 or later, for
// engines on several replicas sharing one store.
//
// A record is one string under the key Prefix+identity. Leases and ttl
// are the key's own expiry: a processing record vanishes when its lease
// lapses unless renewed, a finished one ttl after it finished, and Redis
// frees the memory itself. The store's clock is Redis's, read without
// a script: the key's expiry, which Redis stamps with its own time, is
// the lease end or the expiry of the record, and the record's string
// holds the lease or ttl it was set with, so that the time it was
// written is the expiry less that.
//
// Every change to a record is one atomic step of Redis, and the hot ones run no
// script over large strings: a Lua script costs Redis several times
// what a plain command does, and more the larger the strings it is
// given (BenchmarkRequest has the figures, and the designs measured
// against this one).
// Create is a transaction of SET NX GET, which answers with the live
// record when there is one, and PEXPIRETIME. Finish writes the finished
// record under a key of its own with a plain SET, then a script that
// reads the first 27 bytes of the record checks that the attempt still
// holds it and renames the new one over it; the finished record repeats
// the request fields the store remembers from Create. Renew and Release
// are small scripts. Should the connection fail between Finish's SET
// and its script, the finished record's own key stays, unseen, until
// its ttl ends: its name holds the attempt's token, which no one else
// knows.
//
// A record's key is Prefix, a hash tag (8 hex digits of the identity's
// FNV-1a hash in braces), then the identity; its finished record's key
// carries the same tag. Redis Cluster places a key by its tag alone, so
// every key of a record is in one slot, whatever bytes the identity
// holds, and the store runs on one server (with replicas or Sentinel)
// or on a Redis Cluster alike. Keys of the previous layout (Prefix and
// the identity) are still read on one server, where replicas of the
// previous version write them during a rolling upgrade: Create and Get
// read both names in one transaction, and the new name wins. A
// duplicate that reaches a replica of the previous version after one of
// this version created its record is not seen by it: upgrade while no
// retries are in flight, or accept that window.
//
// With replicas, the store waits (WAIT) for Options.Replicas of them to
// acknowledge each create and finish, so that a failover cannot lose a
// record whose key then runs again: a create not acknowledged in time is
// released and refused (ErrNotAcknowledged), a finish not acknowledged
// is refused so that the engine retries it. Renewals and releases wait
// too: an answer no replica acknowledged may come from a master that a
// failover left behind, or that restarted empty, and its "no such
// record" would make an attempt give up a record that lives on.
//
// The string: its state (P processing, C completed, F failed), the token
// (26 characters), then the time it was created and the lease (while
// processing) or the ttl (once finished), each milliseconds in 13
// digits, a processing record's created time zeros until its first
// renewal; then fields, each its length as a uvarint and its bytes: the
// fingerprint, the raw digest, the key and the operation, and once
// finished the response status (decimal), header (JSON) and body and the
// error. Records of the previous layout, which replicas of an older
// version write during a rolling upgrade, still decode (see decodeV1).
package redisstore

import (
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net/http"
	neturl "net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/idemlint/idemlint/reference"
)

// DefaultPrefix starts the key of every record unless Options says
// otherwise.
const DefaultPrefix = "idemlint:"

// Options configures a Store.
type Options struct {
	// Prefix starts every key; "" means DefaultPrefix. It may hold no
	// brace, which would move the hash tag.
	Prefix string
	// Replicas is how many replicas must acknowledge each create and
	// finish (WAIT). 0 takes it from the server at start: 1 when every
	// master has a replica connected, none otherwise (a master without
	// one could never be acknowledged). NoReplicas never waits.
	Replicas int
	// ReplicaTimeout bounds each wait; 0 means DefaultReplicaTimeout. A
	// call's context deadline shortens it.
	ReplicaTimeout time.Duration
}

// NoReplicas, as Options.Replicas, waits for no replica.
const NoReplicas = -1

// DefaultReplicaTimeout is how long a create or finish waits for its
// replicas unless Options says otherwise.
const DefaultReplicaTimeout = time.Second

// ErrNotAcknowledged refuses a create or finish that fewer replicas than
// Options.Replicas acknowledged in time: a failover could lose it.
var ErrNotAcknowledged = errors.New("redis store: not acknowledged by enough replicas in time")

// Store is a reference.Store on Redis. It is safe for concurrent use.
type Store struct {
	client rueidis.Client
	prefix string
	// cluster: the server is a Redis Cluster. The previous layout's keys
	// are in other slots than the new ones', and are not read.
	cluster bool
	// replicas to wait for, 0 for none; replicaTimeout bounds a wait.
	replicas       int
	replicaTimeout time.Duration

	// multi and exec are MULTI and EXEC, built once.
	multi, exec rueidis.Completed

	mu       sync.Mutex
	attempts map[string]attempt // by token
}

// The URL parameters the store reads itself (the client ignores them).
const (
	replicasParam       = "wait_replicas"
	replicaTimeoutParam = "wait_timeout"
)

// Open connects to the Redis server at url: redis://[user:password@]host:port[/db],
// rediss:// for TLS, or unix:///path/to/socket[?db=N]; a Redis Cluster by
// any of its masters (more as addr=host:port parameters); a master behind
// Sentinel with master_set=NAME and the Sentinels' addresses. The
// parameters wait_replicas=N (-1 for none) and wait_timeout=DURATION set
// Options.Replicas and ReplicaTimeout. A server the store cannot serve
// correctly is refused here (see New).
func Open(url string, o Options) (*Store, error) {
	opt, err := rueidis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis store: %w", err)
	}
	if err := o.fromURL(url); err != nil {
		return nil, err
	}
	// Client-side caching needs RESP3 tracking, which the store does not
	// use: every read must see the latest write of any replica.
	opt.DisableCache = true
	client, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("redis store: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	s, err := New(ctx, client, o)
	if err != nil {
		client.Close()
		return nil, err
	}
	return s, nil
}

// openTimeout bounds the checks of the server at Open.
const openTimeout = 10 * time.Second

// fromURL reads the store's own parameters from url into o.
func (o *Options) fromURL(raw string) error {
	u, err := neturl.Parse(raw)
	if err != nil {
		return fmt.Errorf("redis store: %w", err)
	}
	q := u.Query()
	if v := q.Get(replicasParam); v != "" {
		if o.Replicas, err = strconv.Atoi(v); err != nil || o.Replicas < NoReplicas {
			return fmt.Errorf("redis store: %s=%q: want a number of replicas, or -1 for none", replicasParam, v)
		}
		if o.Replicas == 0 {
			o.Replicas = NoReplicas
		}
	}
	if v := q.Get(replicaTimeoutParam); v != "" {
		if o.ReplicaTimeout, err = time.ParseDuration(v); err != nil || o.ReplicaTimeout < time.Millisecond {
			return fmt.Errorf("redis store: %s=%q: want a duration of at least 1ms, such as 500ms", replicaTimeoutParam, v)
		}
	}
	return nil
}

// New returns a store on an existing client, which the caller closes,
// after checking the server: a Redis older than 7.0 (which lacks
// PEXPIRETIME), a replica (which refuses writes), a prefix with a brace,
// or more replicas to wait for than a master has are refused with an
// error saying so.
func New(ctx context.Context, client rueidis.Client, o Options) (*Store, error) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if strings.ContainsAny(o.Prefix, "{}") {
		return nil, fmt.Errorf("redis store: the prefix %q holds a brace, which would move the hash tag that keeps a record's keys in one slot", o.Prefix)
	}
	s := &Store{client: client, prefix: o.Prefix, attempts: make(map[string]attempt),
		cluster: client.Mode() == rueidis.ClientModeCluster, replicaTimeout: cmp.Or(o.ReplicaTimeout, DefaultReplicaTimeout),
		multi: client.B().Multi().Build().Pin(), exec: client.B().Exec().Build().Pin()}
	masters, err := s.masters(ctx)
	if err != nil {
		return nil, err
	}
	fewest := masters[0].replicas
	for _, m := range masters {
		fewest = min(fewest, m.replicas)
	}
	switch {
	case o.Replicas == 0:
		s.replicas = min(fewest, 1)
	case o.Replicas > fewest:
		return nil, fmt.Errorf("redis store: waiting for %d replicas, but a master has %d connected: every create would be refused", o.Replicas, fewest)
	case o.Replicas > 0:
		s.replicas = o.Replicas
	}
	return s, nil
}

// master is what the store reads of a master at start.
type master struct {
	addr     string
	replicas int // connected
}

// masters reads INFO of every node the client knows, refuses what the
// store cannot serve, and returns the masters.
func (s *Store) masters(ctx context.Context) ([]master, error) {
	nodes := s.client.Nodes()
	addrs := slices.Sorted(maps.Keys(nodes))
	var masters []master
	for _, addr := range addrs {
		node := nodes[addr]
		info, err := node.Do(ctx, node.B().Info().Section("server").Section("replication").Build()).ToString()
		if err != nil {
			return nil, fmt.Errorf("redis store: INFO of %s: %w", addr, err)
		}
		fields := infoFields(info)
		if major, _, _ := strings.Cut(fields["redis_version"], "."); atoi(major) < 7 {
			return nil, fmt.Errorf("redis store: %s runs Redis %s; the store needs 7.0 or later (PEXPIRETIME)", addr, fields["redis_version"])
		}
		if fields["role"] != "master" {
			if s.cluster {
				continue // a cluster's replica, known to the client for reads
			}
			return nil, fmt.Errorf("redis store: %s is a replica (role %s), which refuses writes: give its master, or Sentinel with master_set", addr, fields["role"])
		}
		masters = append(masters, master{addr: addr, replicas: atoi(fields["connected_slaves"])})
	}
	if len(masters) == 0 {
		return nil, errors.New("redis store: the client knows no master")
	}
	return masters, nil
}

// infoFields reads the "name:value" lines of an INFO answer.
func infoFields(info string) map[string]string {
	fields := make(map[string]string)
	for line := range strings.Lines(info) {
		if name, value, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[name] = value
		}
	}
	return fields
}

// atoi is strconv.Atoi for a number INFO states, 0 when it is not one.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// Replicas reports how many replicas each create and finish waits for.
func (s *Store) Replicas() int { return s.replicas }

// Close closes the client.
func (s *Store) Close() { s.client.Close() }

// Layout of a record's string; the scripts use the same places, counted
// from 1.
const (
	tokenLen  = 26 // reference.NewToken's
	stampLen  = 13 // milliseconds, until the year 2286
	tokenAt   = 1
	createdAt = tokenAt + tokenLen
	periodAt  = createdAt + stampLen // the lease or ttl
	fieldsAt  = periodAt + stampLen
)

// The state bytes of a record.
const (
	processingByte = 'P'
	completedByte  = 'C'
	failedByte     = 'F'
)

// stateBytes maps the states a record may be in to their bytes.
var stateBytes = [...]byte{reference.Processing: processingByte, reference.Completed: completedByte, reference.Failed: failedByte}

// neverRenewed is the created time of a processing record until its
// first renewal: it was created at its expiry less its lease.
const neverRenewed = "0000000000000"

// Scripts, all on KEYS[1], the record; ARGV[1] is the attempt's token.
var (
	// ARGV lease_ms. 1 renewed, 0 lease lost. Writes down the created
	// time before the expiry moves, then moves it.
	renewScript = newScript(`
local head = redis.call('GETRANGE', KEYS[1], 0, 52)
if string.sub(head, 1, 27) ~= 'P' .. ARGV[1] then return 0 end
if string.sub(head, 28, 40) == '` + neverRenewed + `' then
  local created = redis.call('PEXPIRETIME', KEYS[1]) - tonumber(string.sub(head, 41, 53))
  redis.call('SETRANGE', KEYS[1], 27, string.format('%013d', created))
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

	// 1 released, 0 lease lost, -1 not processing.
	releaseScript = newScript(`
local head = redis.call('GETRANGE', KEYS[1], 0, 26)
if head == '' or string.sub(head, 2) ~= ARGV[1] then return 0 end
if head ~= 'P' .. ARGV[1] then return -1 end
redis.call('DEL', KEYS[1])
return 1
`)
)

// finishScript: KEYS[2] the finished record, written by the caller
// under a key of its own. 1 finished: KEYS[2] renamed over the record;
// 0 lease lost, -1 not processing: KEYS[2] deleted.
var finishScript = newScript(`
local head = redis.pcall('GETRANGE', KEYS[1], 0, 26)
if head == 'P' .. ARGV[1] then
  redis.call('RENAME', KEYS[2], KEYS[1])
  return 1
end
redis.call('DEL', KEYS[2])
if type(head) ~= 'string' then return head end
if string.sub(head, 2) ~= ARGV[1] then return 0 end
return -1
`)

// luaScript is a script's source and its SHA-1, for EVALSHA in a
// pipeline (EVAL of the source loads it where the server lacks it).
type luaScript struct{ src, sha1 string }

func newScript(src string) luaScript {
	sum := sha1.Sum([]byte(src))
	return luaScript{src: src, sha1: hex.EncodeToString(sum[:])}
}

func ms(d time.Duration) int64 { return max(d.Milliseconds(), 1) }

// appendField appends one field: its length, then its bytes.
func appendField[T string | []byte](b []byte, f T) []byte {
	return append(binary.AppendUvarint(b, uint64(len(f))), f...)
}

// appendStamp appends milliseconds in stampLen digits.
func appendStamp(b []byte, n int64) []byte {
	var digits [stampLen]byte
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, digits[:]...)
}

// attempt is what the store remembers of an attempt it created, so that
// Finish can write the whole finished record without reading the
// processing one.
type attempt struct {
	created int64  // milliseconds
	request []byte // the request fields; nobody modifies them
}

// maxAttempts bounds the attempts the store remembers: past it, Finish
// reads the record first, as it does for an attempt it forgot.
const maxAttempts = 1 << 16

// Create implements reference.Store.
func (s *Store) Create(ctx context.Context, id string, rec reference.Record, lease time.Duration) (reference.Record, bool, error) {
	token := reference.NewToken()
	if len(token) != tokenLen {
		return reference.Record{}, false, fmt.Errorf("redis store: create: a token of %d characters, the layout holds %d", len(token), tokenLen)
	}
	leaseMS := ms(lease)
	v := encodeProcessing(token, leaseMS, rec)
	key := s.key(id)
	now, previous, acked, err := s.transaction(ctx, s.client.B().Set().Key(key).Value(rueidis.BinaryString(v)).Nx().Get().PxMilliseconds(leaseMS).Build(), key, id, true)
	switch {
	case err != nil:
		return reference.Record{}, false, fmt.Errorf("redis store: create: %w", err)
	case !now.found && previous.found:
		// A replica of the previous version holds the key: give up the
		// new record, and answer with that one.
		if err := s.fenced(ctx, "create", releaseScript, id, token); err != nil {
			return reference.Record{}, false, err
		}
		rec, err := decode(previous.v, previous.expiry)
		return rec, false, err
	case !now.found && !acked:
		if err := s.fenced(ctx, "create", releaseScript, id, token); err != nil {
			return reference.Record{}, false, fmt.Errorf("%w; releasing the record: %w", ErrNotAcknowledged, err)
		}
		return reference.Record{}, false, fmt.Errorf("redis store: create: %w", ErrNotAcknowledged)
	case !now.found:
		created := now.expiry - leaseMS
		s.remember(token, attempt{created: created, request: v[fieldsAt:]})
		return reference.Record{
			Key: rec.Key, Operation: rec.Operation, Fingerprint: rec.Fingerprint, RawDigest: rec.RawDigest,
			State: reference.Processing, Token: token, CreatedAt: time.UnixMilli(created), UpdatedAt: time.UnixMilli(created),
			LeaseUntil: time.UnixMilli(now.expiry),
		}, true, nil
	}
	rec, err = decode(now.v, now.expiry)
	return rec, false, err
}

// key returns the key of the record under id: Prefix, the hash tag of
// id, and id.
func (s *Store) key(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	b := make([]byte, 0, len(s.prefix)+10+len(id))
	b = append(append(b, s.prefix...), '{')
	b = hex.AppendEncode(b, h.Sum(nil))
	return string(append(append(b, '}'), id...))
}

// finishedKey returns the key Finish writes the finished record of the
// record at key under, held by token: in the record's slot, apart from
// any identity (after it comes the token, which no one else knows).
func finishedKey(key, token string) string {
	return key[:strings.IndexByte(key, '}')+1] + finishedInfix + token
}

// found is a key's answer in a transaction: its string, and its expiry
// (which a key written in the transaction has, found or not).
type found struct {
	found  bool
	v      string
	expiry int64
}

// transaction runs cmd, a command on key answering with a string, and
// PEXPIRETIME of key as one transaction, and returns cmd's answer and
// the expiry. On one server it reads, in the same transaction, the key
// of the previous layout under id too. write says cmd writes: then, when
// the store waits for replicas, WAIT follows the transaction, and acked
// says whether enough replicas acknowledged it.
func (s *Store) transaction(ctx context.Context, cmd rueidis.Completed, key, id string, write bool) (now, previous found, acked bool, err error) {
	cmds := make(rueidis.Commands, 0, 8)
	cmds = append(cmds, s.multi, cmd, s.client.B().Pexpiretime().Key(key).Build())
	if !s.cluster {
		old := s.prefix + id
		cmds = append(cmds, s.client.B().Get().Key(old).Build(), s.client.B().Pexpiretime().Key(old).Build())
	}
	cmds = append(cmds, s.exec)
	wait := write && s.replicas > 0
	if wait {
		cmds = append(cmds, s.wait(ctx))
	}
	replies := s.client.DoMulti(ctx, cmds...)
	last := len(replies) - 1
	if wait {
		last--
	}
	for _, r := range replies[:last] {
		if err := r.Error(); err != nil {
			return now, previous, false, err
		}
	}
	answers, err := replies[last].ToArray()
	if rueidis.IsRedisNil(err) { // EXEC aborted; not a nil answer of cmd
		return now, previous, false, errors.New("the transaction was aborted")
	}
	if err != nil {
		return now, previous, false, err
	}
	if len(answers) != len(cmds[1:last]) {
		return now, previous, false, fmt.Errorf("a transaction of %d commands answered %d replies", len(cmds[1:last]), len(answers))
	}
	if now, err = foundIn(answers[0], answers[1]); err != nil {
		return now, previous, false, err
	}
	if !s.cluster {
		if previous, err = foundIn(answers[2], answers[3]); err != nil {
			return now, previous, false, err
		}
	}
	acked = true
	if wait {
		acked, err = s.acknowledged(replies[len(replies)-1])
	}
	return now, previous, acked, err
}

// foundIn reads a key's string (nil: not found) and its expiry from
// their answers.
func foundIn(v, expiry rueidis.RedisMessage) (found, error) {
	at, err := expiry.AsInt64()
	if err != nil {
		return found{}, err
	}
	s, err := v.ToString()
	if rueidis.IsRedisNil(err) {
		return found{expiry: at}, nil
	}
	return found{found: err == nil, v: s, expiry: at}, err
}

// wait returns WAIT for the store's replicas, within the time ctx
// leaves: a WAIT that outlived the call would hold its connection.
func (s *Store) wait(ctx context.Context) rueidis.Completed {
	timeout := s.replicaTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(deadline)*3/4)
	}
	return s.client.B().Wait().Numreplicas(int64(s.replicas)).Timeout(ms(timeout)).Build()
}

// acknowledged reads WAIT's answer: whether enough replicas acknowledged.
func (s *Store) acknowledged(reply rueidis.RedisResult) (bool, error) {
	n, err := reply.AsInt64()
	if err != nil {
		return false, fmt.Errorf("WAIT: %w", err)
	}
	return n >= int64(s.replicas), nil
}

// encodeProcessing returns the string of a new processing record.
func encodeProcessing(token string, leaseMS int64, rec reference.Record) []byte {
	v := make([]byte, 0, fieldsAt+16+len(rec.Fingerprint)+len(rec.RawDigest)+len(rec.Key)+len(rec.Operation))
	v = append(append(v, processingByte), token...)
	v = appendStamp(append(v, neverRenewed...), leaseMS)
	return appendRequest(v, rec)
}

// encodeFinished returns the string of the record of attempt a, holding
// token, finished as to with res, whose header is encoded already.
func encodeFinished(to reference.State, token string, a attempt, ttlMS int64, res reference.Result, header []byte) []byte {
	status := strconv.Itoa(res.Response.Status)
	v := make([]byte, 0, fieldsAt+len(a.request)+24+len(status)+len(header)+len(res.Response.Body)+len(res.Error))
	v = append(append(v, stateBytes[to]), token...)
	v = appendStamp(appendStamp(v, a.created), ttlMS)
	v = append(v, a.request...)
	v = appendField(v, status)
	v = appendField(v, header)
	v = appendField(v, res.Response.Body)
	return appendField(v, res.Error)
}

// appendRequest appends the request fields of rec.
func appendRequest(b []byte, rec reference.Record) []byte {
	b = appendField(b, rec.Fingerprint)
	b = appendField(b, rec.RawDigest[:])
	b = appendField(b, rec.Key)
	return appendField(b, rec.Operation)
}

func (s *Store) remember(token string, a attempt) {
	s.mu.Lock()
	if len(s.attempts) < maxAttempts {
		s.attempts[token] = a
	}
	s.mu.Unlock()
}

// forget returns what the store remembers of the attempt holding token,
// and forgets it.
func (s *Store) forget(token string) (attempt, bool) {
	s.mu.Lock()
	a, ok := s.attempts[token]
	delete(s.attempts, token)
	s.mu.Unlock()
	return a, ok
}

// CreateFirst implements reference.CreateFirstStore: Create answers with
// the live record when there is one, so a Get before it would only add a
// round trip.
func (s *Store) CreateFirst() bool { return true }

// Renew implements reference.Store.
func (s *Store) Renew(ctx context.Context, id, token string, lease time.Duration) error {
	return s.fenced(ctx, "renew", renewScript, id, token, strconv.FormatInt(ms(lease), 10))
}

// Finish implements reference.Store.
func (s *Store) Finish(ctx context.Context, id, token string, to reference.State, res reference.Result, ttl time.Duration) error {
	header, err := reference.FinishEncoding(to, res)
	if err != nil {
		return fmt.Errorf("redis store: finish: %w", err)
	}
	a, ok := s.forget(token)
	if !ok {
		// Not an attempt of this store's, or one it could not keep: the
		// record tells what the finished one repeats. One this token
		// finished already goes on too, so that the answer waits for
		// the replicas as the first try did.
		rec, found, err := s.Get(ctx, id)
		switch {
		case err != nil:
			return fmt.Errorf("redis store: finish: %w", err)
		case !found || rec.Token != token:
			return reference.ErrLeaseLost
		}
		a = attempt{created: rec.CreatedAt.UnixMilli(), request: appendRequest(nil, rec)}
	}
	ttlMS := ms(ttl)
	v := encodeFinished(to, token, a, ttlMS, res, header)
	key := s.key(id)
	finished := finishedKey(key, token)
	reply, err := s.script(ctx, finishScript, []string{key, finished}, []string{token},
		s.client.B().Set().Key(finished).Value(rueidis.BinaryString(v)).PxMilliseconds(ttlMS).Build())
	if errors.Is(err, ErrNotAcknowledged) {
		// Tried again, the script finds the record finished by this
		// token, and the wait covers it.
		s.remember(token, a)
	}
	if err != nil {
		return fmt.Errorf("redis store: finish: %w", err)
	}
	return fencedReply("finish", reply)
}

// script runs sc on keys with args after the commands before (whose
// answers are only checked for errors), then, when the store waits for
// replicas, WAIT, all on one connection, and returns the script's
// answer. When the store waits for replicas an answer not acknowledged
// is ErrNotAcknowledged, whatever it says: a master that passes its
// writes to no replica may be one that a failover left behind, or one
// that restarted empty, and its "no such record" is not to be trusted.
func (s *Store) script(ctx context.Context, sc luaScript, keys, args []string, before ...rueidis.Completed) (rueidis.RedisResult, error) {
	waited := func(cmds ...rueidis.Completed) []rueidis.RedisResult {
		if s.replicas > 0 {
			cmds = append(cmds, s.wait(ctx))
		}
		return s.client.DoMulti(ctx, cmds...)
	}
	replies := waited(append(before, s.client.B().Evalsha().Sha1(sc.sha1).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build())...)
	for _, r := range replies[:len(before)] {
		if err := r.Error(); err != nil {
			return rueidis.RedisResult{}, err
		}
	}
	replies = replies[len(before):]
	if err, ok := rueidis.IsRedisErr(replies[0].Error()); ok && err.IsNoScript() {
		// Commands sent are recycled: build them again.
		replies = waited(s.client.B().Eval().Script(sc.src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build())
	}
	if s.replicas > 0 {
		if acked, err := s.acknowledged(replies[1]); err != nil || !acked {
			return replies[0], cmp.Or(err, ErrNotAcknowledged)
		}
	}
	return replies[0], nil
}

// finishedInfix puts the key of a finished record, before it replaces
// the processing one, under Prefix apart from the identities: after it
// comes the token, which no one else knows.
const finishedInfix = "finishing:"

// Release implements reference.Store.
func (s *Store) Release(ctx context.Context, id, token string) error {
	s.forget(token)
	return s.fenced(ctx, "release", releaseScript, id, token)
}

// fenced runs a script that needs the attempt's token.
func (s *Store) fenced(ctx context.Context, what string, sc luaScript, id, token string, args ...string) error {
	reply, err := s.script(ctx, sc, []string{s.key(id)}, append([]string{token}, args...))
	if err != nil {
		return fmt.Errorf("redis store: %s: %w", what, err)
	}
	return fencedReply(what, reply)
}

// fencedReply maps the answer of a script that needs the attempt's
// token: 1 done, 0 ErrLeaseLost, -1 ErrInvalidTransition.
func fencedReply(what string, reply rueidis.RedisResult) error {
	n, err := reply.AsInt64()
	switch {
	case err != nil:
		return fmt.Errorf("redis store: %s: %w", what, err)
	case n == 0:
		return reference.ErrLeaseLost
	case n < 0:
		return fmt.Errorf("%w: the attempt already ended", reference.ErrInvalidTransition)
	}
	return nil
}

// Get implements reference.Store.
func (s *Store) Get(ctx context.Context, id string) (reference.Record, bool, error) {
	key := s.key(id)
	now, previous, _, err := s.transaction(ctx, s.client.B().Get().Key(key).Build(), key, id, false)
	switch {
	case err != nil:
		return reference.Record{}, false, fmt.Errorf("redis store: get: %w", err)
	case !now.found && !previous.found:
		return reference.Record{}, false, nil
	case !now.found:
		now = previous
	}
	rec, err := decode(now.v, now.expiry)
	return rec, err == nil, err
}

var errCorrupt = errors.New("redis store: a record is malformed")

// decode reads a record from its string and its key's expiry in Unix
// milliseconds.
func decode(v string, expiry int64) (reference.Record, error) {
	if v != "" && v[0] >= '1' && v[0] <= '3' {
		return decodeV1(v)
	}
	if len(v) < fieldsAt || expiry < 0 {
		return reference.Record{}, errCorrupt
	}
	var rec reference.Record
	switch v[0] {
	case processingByte:
		rec.State = reference.Processing
	case completedByte:
		rec.State = reference.Completed
	case failedByte:
		rec.State = reference.Failed
	default:
		return reference.Record{}, errCorrupt
	}
	rec.Token = v[tokenAt:createdAt]
	created, ok1 := digits(v[createdAt:periodAt])
	period, ok2 := digits(v[periodAt:fieldsAt])
	if !ok1 || !ok2 || period > expiry {
		return reference.Record{}, errCorrupt
	}
	updated := expiry - period
	if rec.State == reference.Processing {
		rec.LeaseUntil = time.UnixMilli(expiry)
		if v[createdAt:periodAt] == neverRenewed {
			created = updated
		}
		if created > expiry { // created after its lease ends: not a record the store wrote
			return reference.Record{}, errCorrupt
		}
		updated = created
	} else {
		rec.ExpiresAt = time.UnixMilli(expiry)
	}
	rec.CreatedAt, rec.UpdatedAt = time.UnixMilli(created), time.UnixMilli(updated)
	return rec, decodeFields(&rec, v[fieldsAt:])
}

// Layout of the previous version's string: the state digit (1
// processing, 2 completed, 3 failed), the token, then created, updated
// and the lease end (while processing) or the expiry (once finished),
// each Unix milliseconds in 13 digits; then the fields, as now.
const (
	v1CreatedAt  = tokenAt + tokenLen
	v1UpdatedAt  = v1CreatedAt + stampLen
	v1DeadlineAt = v1UpdatedAt + stampLen
	v1FieldsAt   = v1DeadlineAt + stampLen
)

// decodeV1 reads a record of the previous layout, which holds its times
// itself.
func decodeV1(v string) (reference.Record, error) {
	if len(v) < v1FieldsAt {
		return reference.Record{}, errCorrupt
	}
	rec := reference.Record{State: reference.State(v[0] - '0'), Token: v[tokenAt:v1CreatedAt]}
	created, ok1 := digits(v[v1CreatedAt:v1UpdatedAt])
	updated, ok2 := digits(v[v1UpdatedAt:v1DeadlineAt])
	deadline, ok3 := digits(v[v1DeadlineAt:v1FieldsAt])
	if !ok1 || !ok2 || !ok3 || rec.State < reference.Processing || rec.State > reference.Failed {
		return reference.Record{}, errCorrupt
	}
	rec.CreatedAt, rec.UpdatedAt = time.UnixMilli(created), time.UnixMilli(updated)
	if rec.State == reference.Processing {
		rec.LeaseUntil = time.UnixMilli(deadline)
	} else {
		rec.ExpiresAt = time.UnixMilli(deadline)
	}
	return rec, decodeFields(&rec, v[v1FieldsAt:])
}

// decodeFields reads the fields of a record in rec's state into rec.
func decodeFields(rec *reference.Record, fields string) error {
	f := fieldReader{rest: fields}
	rec.Fingerprint = f.next()
	raw := f.next()
	rec.Key, rec.Operation = f.next(), f.next()
	if len(raw) != len(rec.RawDigest) {
		return errCorrupt
	}
	copy(rec.RawDigest[:], raw)
	if rec.State != reference.Processing {
		status, header, body := f.next(), f.next(), f.next()
		rec.Error = f.next()
		var err error
		if rec.Response.Status, err = strconv.Atoi(status); err != nil {
			return errCorrupt
		}
		rec.Response.Body = []byte(body)
		if header != "" {
			if rec.Response.Header, err = decodeHeader(header); err != nil {
				return errCorrupt
			}
		}
	}
	if f.bad || f.rest != "" {
		return errCorrupt
	}
	return nil
}

// lastHeader is the stored response header decoded last. A service
// answers most requests with the same header, so a replay usually shares
// that one instead of unmarshalling its JSON again; records share their
// response's header anyway, and nobody modifies it.
var lastHeader atomic.Pointer[decodedHeader]

type decodedHeader struct {
	json   string
	header http.Header
}

// decodeHeader reads a stored response header from its JSON.
func decodeHeader(v string) (http.Header, error) {
	if last := lastHeader.Load(); last != nil && last.json == v {
		return last.header, nil
	}
	var h http.Header
	if err := json.Unmarshal([]byte(v), &h); err != nil {
		return nil, err
	}
	// A copy: v is a slice of the record's whole string.
	lastHeader.Store(&decodedHeader{json: strings.Clone(v), header: h})
	return h, nil
}

// fieldReader reads the length-prefixed fields of a record; a field that
// runs past the end makes it bad and reads as "".
type fieldReader struct {
	rest string
	bad  bool
}

func (f *fieldReader) next() string {
	n, size := binary.Uvarint([]byte(f.rest[:min(len(f.rest), binary.MaxVarintLen64)]))
	if size <= 0 || n > uint64(len(f.rest)-size) {
		f.bad = true
		f.rest = ""
		return ""
	}
	field := f.rest[size : size+int(n)]
	f.rest = f.rest[size+int(n):]
	return field
}

// digits reads the 13 digits of a time or a period in milliseconds.
func digits(v string) (int64, bool) {
	n, err := strconv.ParseUint(v, 10, 64)
	return int64(n), err == nil && n < 1e13
}
