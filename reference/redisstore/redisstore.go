// Package redisstore is a reference.Store on Redis, for engines on several
// replicas sharing one store.
//
// A record is one hash under the key Prefix+identity. Every change is one
// Lua script, so it is atomic, and reads the time with Redis's TIME, so
// replicas with skewed clocks agree. Leases and ttl are the key's own
// expiry (PEXPIRE): a processing record vanishes when its lease lapses
// unless renewed, a finished one ttl after it finished, and Redis frees
// the memory itself. Fields: s state, t token, f fingerprint, r raw
// digest, k key, o operation, c/u created/updated (Unix ms), l lease end,
// e expiry, rs/rh/rb response status, header (JSON) and body, er error.
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/idemlint/idemlint/reference"
)

// DefaultPrefix starts the key of every record unless Options says
// otherwise.
const DefaultPrefix = "idemlint:"

// Options configures a Store.
type Options struct {
	// Prefix starts every key; "" means DefaultPrefix.
	Prefix string
}

// Store is a reference.Store on Redis. It is safe for concurrent use.
type Store struct {
	client rueidis.Client
	prefix string
}

// Open connects to the Redis server at url: redis://[user:password@]host:port[/db],
// rediss:// for TLS, or unix:///path/to/socket[?db=N].
func Open(url string, o Options) (*Store, error) {
	opt, err := rueidis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis store: %w", err)
	}
	// Client-side caching needs RESP3 tracking, which the store does not
	// use: every read must see the latest write of any replica.
	opt.DisableCache = true
	client, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("redis store: %w", err)
	}
	return New(client, o), nil
}

// New returns a store on an existing client, which the caller closes.
func New(client rueidis.Client, o Options) *Store {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	return &Store{client: client, prefix: o.Prefix}
}

// Close closes the client.
func (s *Store) Close() { s.client.Close() }

// Scripts. now is the server's time in milliseconds; numbers are written
// with %d, as Lua's default formatting would round them.
const nowLua = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
`

var (
	// KEYS[1]; ARGV lease_ms, token, fingerprint, raw digest, key,
	// operation. Returns {1, fields} when it created the record, else
	// {0, the live record's fields}.
	createScript = rueidis.NewLuaScript(`
local live = redis.call('HGETALL', KEYS[1])
if #live > 0 then return {0, live} end` + nowLua + `
local ms = string.format('%d', now)
redis.call('HSET', KEYS[1], 's', '1', 't', ARGV[2], 'f', ARGV[3], 'r', ARGV[4], 'k', ARGV[5], 'o', ARGV[6],
  'c', ms, 'u', ms, 'l', string.format('%d', now + tonumber(ARGV[1])))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {1, redis.call('HGETALL', KEYS[1])}
`)

	// KEYS[1]; ARGV token, lease_ms. 1 renewed, 0 lease lost.
	renewScript = rueidis.NewLuaScript(`
local v = redis.call('HMGET', KEYS[1], 's', 't')
if v[2] ~= ARGV[1] or v[1] ~= '1' then return 0 end` + nowLua + `
redis.call('HSET', KEYS[1], 'l', string.format('%d', now + tonumber(ARGV[2])))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

	// KEYS[1]; ARGV token, state, ttl_ms, status, header, body, error.
	// 1 finished, 0 lease lost, -1 not processing.
	finishScript = rueidis.NewLuaScript(`
local v = redis.call('HMGET', KEYS[1], 's', 't')
if v[2] ~= ARGV[1] then return 0 end
if v[1] ~= '1' then return -1 end` + nowLua + `
redis.call('HSET', KEYS[1], 's', ARGV[2], 'u', string.format('%d', now), 'e', string.format('%d', now + tonumber(ARGV[3])),
  'rs', ARGV[4], 'rh', ARGV[5], 'rb', ARGV[6], 'er', ARGV[7])
redis.call('HDEL', KEYS[1], 'l')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

	// KEYS[1]; ARGV token. 1 released, 0 lease lost, -1 not processing.
	releaseScript = rueidis.NewLuaScript(`
local v = redis.call('HMGET', KEYS[1], 's', 't')
if v[2] ~= ARGV[1] then return 0 end
if v[1] ~= '1' then return -1 end
redis.call('DEL', KEYS[1])
return 1
`)
)

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// Create implements reference.Store.
func (s *Store) Create(ctx context.Context, id string, rec reference.Record, lease time.Duration) (reference.Record, bool, error) {
	reply, err := createScript.Exec(ctx, s.client, []string{s.prefix + id},
		[]string{ms(lease), reference.NewToken(), rec.Fingerprint, string(rec.RawDigest[:]), rec.Key, rec.Operation}).ToArray()
	if err != nil {
		return reference.Record{}, false, fmt.Errorf("redis store: create: %w", err)
	}
	if len(reply) != 2 {
		return reference.Record{}, false, fmt.Errorf("redis store: create answered %d values, want 2", len(reply))
	}
	created, err := reply[0].AsInt64()
	if err != nil {
		return reference.Record{}, false, fmt.Errorf("redis store: create: %w", err)
	}
	fields, err := reply[1].AsStrMap()
	if err != nil {
		return reference.Record{}, false, fmt.Errorf("redis store: create: %w", err)
	}
	live, err := decode(fields)
	return live, created == 1, err
}

// Renew implements reference.Store.
func (s *Store) Renew(ctx context.Context, id, token string, lease time.Duration) error {
	return s.fenced(ctx, "renew", renewScript, id, token, ms(lease))
}

// Finish implements reference.Store.
func (s *Store) Finish(ctx context.Context, id, token string, to reference.State, res reference.Result, ttl time.Duration) error {
	header, err := reference.FinishEncoding(to, res)
	if err != nil {
		return fmt.Errorf("redis store: finish: %w", err)
	}
	return s.fenced(ctx, "finish", finishScript, id, token, strconv.Itoa(int(to)), ms(ttl),
		strconv.Itoa(res.Response.Status), string(header), string(res.Response.Body), res.Error)
}

// Release implements reference.Store.
func (s *Store) Release(ctx context.Context, id, token string) error {
	return s.fenced(ctx, "release", releaseScript, id, token)
}

// fenced runs a script that needs the attempt's token and maps its
// answer: 1 done, 0 ErrLeaseLost, -1 ErrInvalidTransition.
func (s *Store) fenced(ctx context.Context, what string, script *rueidis.Lua, id, token string, args ...string) error {
	n, err := script.Exec(ctx, s.client, []string{s.prefix + id}, append([]string{token}, args...)).AsInt64()
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
	fields, err := s.client.Do(ctx, s.client.B().Hgetall().Key(s.prefix+id).Build()).AsStrMap()
	if err != nil {
		return reference.Record{}, false, fmt.Errorf("redis store: get: %w", err)
	}
	if len(fields) == 0 {
		return reference.Record{}, false, nil
	}
	rec, err := decode(fields)
	return rec, err == nil, err
}

var errCorrupt = errors.New("redis store: a record lacks a field or holds a malformed one")

// decode reads a record from its hash fields.
func decode(f map[string]string) (reference.Record, error) {
	state, err := strconv.Atoi(f["s"])
	raw := f["r"]
	if err != nil || f["t"] == "" || len(raw) != len(reference.Record{}.RawDigest) {
		return reference.Record{}, errCorrupt
	}
	rec := reference.Record{
		Key: f["k"], Operation: f["o"], Fingerprint: f["f"], State: reference.State(state), Token: f["t"], Error: f["er"],
		CreatedAt: unixMilli(f["c"]), UpdatedAt: unixMilli(f["u"]), LeaseUntil: unixMilli(f["l"]), ExpiresAt: unixMilli(f["e"]),
	}
	copy(rec.RawDigest[:], raw)
	if rec.State != reference.Processing {
		if rec.Response.Status, err = strconv.Atoi(f["rs"]); err != nil {
			return reference.Record{}, errCorrupt
		}
		rec.Response.Body = []byte(f["rb"])
		if h := f["rh"]; h != "" {
			if err := json.Unmarshal([]byte(h), &rec.Response.Header); err != nil {
				return reference.Record{}, errCorrupt
			}
		}
	}
	return rec, nil
}

// unixMilli reads a time stamp; absent is the zero time.
func unixMilli(v string) time.Time {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(n)
}
