// Package redisstore is a reference.Store on Redis, for engines on several
// replicas sharing one store.
//
// A record is one string under the key Prefix+identity. Every change is
// one Lua script, so it is atomic, and reads the time with Redis's TIME,
// so replicas with skewed clocks agree. Leases and ttl are the key's own
// expiry: a processing record vanishes when its lease lapses unless
// renewed, a finished one ttl after it finished, and Redis frees the
// memory itself. A string rather than a hash of fields costs Redis about
// half as much per request, and lets the scripts read only what they
// check: the state and token at fixed places.
//
// The string: the state digit (1 processing, 2 completed, 3 failed), the
// token (26 characters), then created, updated and the lease end (while
// processing) or the expiry (once finished), each Unix milliseconds in 13
// digits; then fields, each its length as a uvarint and its bytes: the
// fingerprint, the raw digest, the key and the operation, and once
// finished the response status (decimal), header (JSON) and body and the
// error.
package redisstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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

// Layout of a record's string; the scripts use the same places, counted
// from 1.
const (
	tokenLen   = 26 // reference.NewToken's
	stampLen   = 13 // Unix milliseconds, until the year 2286
	tokenAt    = 1
	createdAt  = tokenAt + tokenLen
	updatedAt  = createdAt + stampLen
	deadlineAt = updatedAt + stampLen // lease end or expiry
	fieldsAt   = deadlineAt + stampLen
)

// Scripts. now is the server's time in milliseconds; numbers are written
// with %d, as Lua's default formatting would round them.
const nowLua = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
`

var (
	// KEYS[1]; ARGV lease_ms, token, fields. Returns the server's now
	// when it created the record, else the live record.
	createScript = rueidis.NewLuaScript(`
local live = redis.call('GET', KEYS[1])
if live then return live end` + nowLua + `
local lease = tonumber(ARGV[1])
redis.call('SET', KEYS[1], '1' .. ARGV[2] .. string.format('%013d%013d%013d', now, now, now + lease) .. ARGV[3], 'PX', lease)
return now
`)

	// KEYS[1]; ARGV token, lease_ms. 1 renewed, 0 lease lost. Rewrites
	// the lease end in place.
	renewScript = rueidis.NewLuaScript(`
if redis.call('GETRANGE', KEYS[1], 0, 26) ~= '1' .. ARGV[1] then return 0 end` + nowLua + `
redis.call('SETRANGE', KEYS[1], 53, string.format('%013d', now + tonumber(ARGV[2])))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

	// KEYS[1]; ARGV token, state, ttl_ms, response fields. 1 finished, 0
	// lease lost, -1 not processing. Keeps the token, created time and
	// request fields.
	finishScript = rueidis.NewLuaScript(`
local live = redis.call('GET', KEYS[1])
if not live or string.sub(live, 2, 27) ~= ARGV[1] then return 0 end
if string.sub(live, 1, 1) ~= '1' then return -1 end` + nowLua + `
local ttl = tonumber(ARGV[3])
redis.call('SET', KEYS[1], ARGV[2] .. string.sub(live, 2, 40) .. string.format('%013d%013d', now, now + ttl) .. string.sub(live, 67) .. ARGV[4], 'PX', ttl)
return 1
`)

	// KEYS[1]; ARGV token. 1 released, 0 lease lost, -1 not processing.
	releaseScript = rueidis.NewLuaScript(`
local head = redis.call('GETRANGE', KEYS[1], 0, 26)
if head == '' or string.sub(head, 2) ~= ARGV[1] then return 0 end
if head ~= '1' .. ARGV[1] then return -1 end
redis.call('DEL', KEYS[1])
return 1
`)
)

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// appendField appends one field: its length, then its bytes.
func appendField[T string | []byte](b []byte, f T) []byte {
	return append(binary.AppendUvarint(b, uint64(len(f))), f...)
}

// Create implements reference.Store.
func (s *Store) Create(ctx context.Context, id string, rec reference.Record, lease time.Duration) (reference.Record, bool, error) {
	token := reference.NewToken()
	if len(token) != tokenLen {
		return reference.Record{}, false, fmt.Errorf("redis store: create: a token of %d characters, the layout holds %d", len(token), tokenLen)
	}
	fields := make([]byte, 0, 16+len(rec.Fingerprint)+len(rec.RawDigest)+len(rec.Key)+len(rec.Operation))
	fields = appendField(fields, rec.Fingerprint)
	fields = appendField(fields, rec.RawDigest[:])
	fields = appendField(fields, rec.Key)
	fields = appendField(fields, rec.Operation)
	leaseMS := ms(lease)
	reply, err := createScript.Exec(ctx, s.client, []string{s.prefix + id}, []string{leaseMS, token, rueidis.BinaryString(fields)}).ToMessage()
	if err != nil {
		return reference.Record{}, false, fmt.Errorf("redis store: create: %w", err)
	}
	if reply.IsInt64() {
		now, _ := reply.AsInt64()
		created := time.UnixMilli(now)
		return reference.Record{
			Key: rec.Key, Operation: rec.Operation, Fingerprint: rec.Fingerprint, RawDigest: rec.RawDigest,
			State: reference.Processing, Token: token, CreatedAt: created, UpdatedAt: created,
			LeaseUntil: created.Add(time.Duration(lease.Milliseconds()) * time.Millisecond),
		}, true, nil
	}
	live, err := reply.ToString()
	if err != nil {
		return reference.Record{}, false, fmt.Errorf("redis store: create: %w", err)
	}
	rec, err = decode(live)
	return rec, false, err
}

// CreateFirst implements reference.CreateFirstStore: Create is one
// script that answers with the live record when there is one, so a Get
// before it would only add a round trip.
func (s *Store) CreateFirst() bool { return true }

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
	fields := make([]byte, 0, 16+len(header)+len(res.Response.Body)+len(res.Error))
	fields = appendField(fields, strconv.Itoa(res.Response.Status))
	fields = appendField(fields, header)
	fields = appendField(fields, res.Response.Body)
	fields = appendField(fields, res.Error)
	return s.fenced(ctx, "finish", finishScript, id, token, strconv.Itoa(int(to)), ms(ttl), rueidis.BinaryString(fields))
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
	v, err := s.client.Do(ctx, s.client.B().Get().Key(s.prefix+id).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		return reference.Record{}, false, nil
	}
	if err != nil {
		return reference.Record{}, false, fmt.Errorf("redis store: get: %w", err)
	}
	rec, err := decode(v)
	return rec, err == nil, err
}

var errCorrupt = errors.New("redis store: a record is malformed")

// decode reads a record from its string.
func decode(v string) (reference.Record, error) {
	if len(v) < fieldsAt {
		return reference.Record{}, errCorrupt
	}
	rec := reference.Record{State: reference.State(v[0] - '0'), Token: v[tokenAt:createdAt]}
	created, ok1 := stamp(v[createdAt:updatedAt])
	updated, ok2 := stamp(v[updatedAt:deadlineAt])
	deadline, ok3 := stamp(v[deadlineAt:fieldsAt])
	if !ok1 || !ok2 || !ok3 || rec.State < reference.Processing || rec.State > reference.Failed {
		return reference.Record{}, errCorrupt
	}
	rec.CreatedAt, rec.UpdatedAt = created, updated
	if rec.State == reference.Processing {
		rec.LeaseUntil = deadline
	} else {
		rec.ExpiresAt = deadline
	}
	f := fieldReader{rest: v[fieldsAt:]}
	rec.Fingerprint = f.next()
	raw := f.next()
	rec.Key, rec.Operation = f.next(), f.next()
	if len(raw) != len(rec.RawDigest) {
		return reference.Record{}, errCorrupt
	}
	copy(rec.RawDigest[:], raw)
	if rec.State != reference.Processing {
		status, header, body := f.next(), f.next(), f.next()
		rec.Error = f.next()
		var err error
		if rec.Response.Status, err = strconv.Atoi(status); err != nil {
			return reference.Record{}, errCorrupt
		}
		rec.Response.Body = []byte(body)
		if header != "" {
			if rec.Response.Header, err = decodeHeader(header); err != nil {
				return reference.Record{}, errCorrupt
			}
		}
	}
	if f.bad || f.rest != "" {
		return reference.Record{}, errCorrupt
	}
	return rec, nil
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

// stamp reads 13 digits of Unix milliseconds.
func stamp(v string) (time.Time, bool) {
	n, err := strconv.ParseUint(v, 10, 64)
	return time.UnixMilli(int64(n)), err == nil
}
