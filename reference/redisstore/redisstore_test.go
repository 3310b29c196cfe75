package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/redisstore"
	"github.com/idemlint/idemlint/reference/storetest"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

var stores atomic.Int64

// open returns a store on the test server whose keys no other store of
// the run shares.
func open(t *testing.T) *redisstore.Store {
	t.Helper()
	url := testserver.StartRedis(t).URL()
	s, err := redisstore.Open(url, redisstore.Options{Prefix: "test" + strconv.FormatInt(stores.Add(1), 10) + ":"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) reference.Store { return open(t) })
}

func TestOpenRefusesBadURL(t *testing.T) {
	if _, err := redisstore.Open("http://127.0.0.1:1", redisstore.Options{}); err == nil {
		t.Error("Open accepted an http URL")
	}
}

// TestServerDown: a store whose server is gone fails every call with an
// error, never a record or a hang.
func TestServerDown(t *testing.T) {
	s, err := redisstore.Open("unix://"+t.TempDir()+"/absent.sock", redisstore.Options{})
	if err == nil {
		defer s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _, err = s.Create(ctx, "id", reference.Record{}, time.Second)
	}
	if err == nil || errors.Is(err, reference.ErrLeaseLost) {
		t.Errorf("a store without a server = %v, want a connection error", err)
	}
}

// BenchmarkRequest runs the store calls of one request of serve's
// benchmark from 32 goroutines, as the engine admits requests on Redis
// (a reference.CreateFirstStore): for a new key Create and Finish with a
// 1 KB body, for a finished one Create; and as it does on other stores,
// with a Get first ("get-first"). It reports the CPU time Redis and this
// process, the client, spent per request.
//
//	go test -run '^$' -bench Request -benchtime 40000x -count 3 ./reference/redisstore/
//
// A new key costs Redis 9.9-11.8 us of CPU and the client 11.8-12.7 us and
// 21 allocations, a replay 2.3-2.6 us and 6.4-7.2 us; the previous layout's
// two Lua scripts cost Redis 19.3-22.6 and 4.8-4.9 us (3 runs alternating).
// A Lua script costs Redis several times a plain command however little it
// does (EVALSHA of "return 1" about 2.5 us, each redis.call about 1 us
// more, and every string it sees hashed byte by byte), so create is a
// MULTI of SET NX GET and PEXPIRETIME, finish a plain SET of the finished
// record beside a script that checks the 27-byte token and renames it over
// the record, and the record is one string rather than a hash. Fencing is
// what remains: without a compare-and-set command before Redis 8.4, finish
// needs that script, about twice the cost of an unfenced SET. rueidis was
// chosen over go-redis by this workload (16 goroutines on a Unix socket,
// HGETALL, create script, finish script with 1 KB, HGETALL): 39-81 us and
// 34 allocations per request against 114-165 us and 68 for go-redis v9.22,
// as it pipelines concurrent commands. PostgreSQL admits with Create
// first too, its plain INSERT followed by a Get only when it meets a live
// row (pgstore.Store.CreateFirst); one statement that inserts or else
// returns the live row cost the database no less per new key than Get
// and INSERT, and more per duplicate.
//
// Through "idemlint serve" (Redis 7.0, two cores, BenchmarkRedisPeers'
// unique load, each variant run in turn with the store as it is, three
// times; Redis CPU per request) a new key is 8 commands
// (TestCommandsPerRequest), and INFO commandstats puts most of its time
// in the script: 9-13 us for EVALSHA, of which its
// GETRANGE and RENAME take 3, 4-5 us for the transaction of Create, 2.4
// us for Finish's SET; 20-22.5 us in all through serve, 10-13 us with
// the store alone here, whose requests reach Redis in larger pipelines
// (0.17 reads per request, serve's 0.4) and find its caches warm.
// Peers without fencing send two plain SETs: Powertools 11-13 us in the
// same runs. The variants, each against 20-22.5 us:
//   - Create as a script of SET NX GET and PEXPIRETIME instead of the
//     transaction: 24-24.5 us. A script costs Redis far more than a
//     transaction of the same commands, above all its first call.
//   - Finish as one script with the finished record as its argument
//     instead of SET and a rename: 23.5-25 us; both scripts: 27-28 us.
//   - The same scripts as FUNCTIONs (FCALL): no better.
//   - One connection instead of rueidis' two, with a flush delay of 20
//     us to 1 ms: reads per request fall from 0.4 to 0.15-0.3, CPU per
//     request stays within the runs' spread.
//   - Finish without a script, fenced by the lease's end instead of the
//     token (a transaction of SET PXAT lease-end, PEXPIRE ttl and
//     RENAME, which does nothing once the lease ended): 17-18 us. Not
//     taken: a record lost before its lease ends (Redis restarted
//     without its append-only file, a failover) would let the attempt
//     overwrite the record of one that started since, which the token
//     forbids.
//
// WATCH instead of the script needs a connection per attempt, whose
// unbatched round trips cost what the script saves (with the store
// alone, 13 us a new key against 12-14).
//
// On a Redis Cluster of 3 masters ("cluster/"), the masters' CPU summed;
// on a master with a replica, which the store waits for
// ("replica-acknowledged/"), the master's: see README's capacity
// figures.
func BenchmarkRequest(b *testing.B) {
	redis := testserver.StartRedis(b)
	benchmarkRequest(b, redis.URL(), redis.CPU)
	b.Run("cluster", func(b *testing.B) {
		c := testserver.StartRedisCluster(b, 3, false)
		benchmarkRequest(b, c.URL(), c.CPU)
	})
	b.Run("replica-acknowledged", func(b *testing.B) {
		master := testserver.StartRedisNode(b)
		testserver.StartRedisNode(b, "--replicaof", strings.Replace(master.Addr, ":", " ", 1))
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if info, err := master.Info("replication"); err == nil && strings.Contains(info["slave0"], "state=online") {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("the replica did not connect within 30s")
			}
		}
		benchmarkRequest(b, master.URL(), master.CPU)
	})
}

// benchmarkRequest is BenchmarkRequest on the server at url, whose CPU
// time redisCPU reads.
func benchmarkRequest(b *testing.B, url string, redisCPU func() (time.Duration, error)) {
	s, err := redisstore.Open(url, redisstore.Options{Prefix: "bench" + strconv.FormatInt(time.Now().UnixNano(), 10) + ":"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	ctx := context.Background()
	res := reference.Result{Response: reference.Response{Status: 201, Header: http.Header{"Content-Type": {"application/json"}}, Body: bytes.Repeat([]byte("x"), 1000)}}
	rec := reference.Record{Key: "key", Operation: "orders.create", Fingerprint: "sha256:" + strings.Repeat("0", 64)}
	var next atomic.Int64
	newRequest := func(id string) error {
		live, created, err := s.Create(ctx, id, rec, time.Minute)
		if err != nil || !created {
			return fmt.Errorf("create: created %v, %v", created, err)
		}
		return s.Finish(ctx, id, live.Token, reference.Completed, res, time.Hour)
	}
	getFirst := func(id string) error {
		if _, found, err := s.Get(ctx, id); err != nil || found {
			return fmt.Errorf("get before create: found %v, %v", found, err)
		}
		return newRequest(id)
	}
	replayed := "replayed"
	if err := newRequest(replayed); err != nil {
		b.Fatal(err)
	}
	replay := func(lookup func() (reference.Record, bool, error)) func() error {
		return func() error {
			if rec, found, err := lookup(); err != nil || !found || rec.State != reference.Completed {
				return fmt.Errorf("replay: found %v, state %v, %v", found, rec.State, err)
			}
			return nil
		}
	}
	for _, bench := range []struct {
		name    string
		request func() error
	}{
		{"new", func() error { return newRequest(strconv.FormatInt(next.Add(1), 10)) }},
		{"replay", replay(func() (reference.Record, bool, error) {
			live, created, err := s.Create(ctx, replayed, rec, time.Minute)
			return live, !created, err
		})},
		{"get-first/new", func() error { return getFirst(strconv.FormatInt(next.Add(1), 10)) }},
		{"get-first/replay", replay(func() (reference.Record, bool, error) { return s.Get(ctx, replayed) })},
	} {
		b.Run(bench.name, func(b *testing.B) {
			before, err := redisCPU()
			if err != nil {
				b.Fatal(err)
			}
			ours := processCPU(b)
			b.SetParallelism(16)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := bench.request(); err != nil {
						b.Error(err)
						return
					}
				}
			})
			after, err := redisCPU()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64((after-before).Nanoseconds())/1000/float64(b.N), "redis-cpu-us/op")
			b.ReportMetric(float64((processCPU(b)-ours).Nanoseconds())/1000/float64(b.N), "client-cpu-us/op")
		})
	}
}

// processCPU returns the user and system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// TestForeignValueIsAnError: a key of the store's that holds something
// else (another program's data, or a hash of an older layout) fails
// every call with an error, never a record.
func TestForeignValueIsAnError(t *testing.T) {
	url := testserver.StartRedis(t).URL()
	prefix := "foreign" + strconv.FormatInt(stores.Add(1), 10) + ":"
	s, err := redisstore.Open(url, redisstore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	client := redisstore.NewTestClient(t, url)
	ctx := context.Background()
	for id, cmd := range map[string]rueidis.Completed{
		"hash":   client.B().Hset().Key(prefix+"hash").FieldValue().FieldValue("s", "1").Build(),
		"string": client.B().Set().Key(prefix + "string").Value("not a record").Build(),
	} {
		if err := client.Do(ctx, cmd).Error(); err != nil {
			t.Fatal(err)
		}
		if rec, found, err := s.Get(ctx, id); err == nil || found {
			t.Errorf("Get of a %s = %+v, %v, %v; want an error", id, rec, found, err)
		}
		if rec, created, err := s.Create(ctx, id, reference.Record{}, time.Minute); err == nil || created {
			t.Errorf("Create over a %s = %+v, %v, %v; want an error", id, rec, created, err)
		}
		if err := s.Finish(ctx, id, "token", reference.Completed, reference.Result{}, time.Minute); err == nil {
			t.Errorf("Finish of a %s succeeded", id)
		}
	}
}

// TestFinishByAnotherStore: a store finishes an attempt it did not
// create (it remembers only its own) from the record, which it reads
// first, and leaves no key of its own behind, finished or fenced.
func TestFinishByAnotherStore(t *testing.T) {
	url := testserver.StartRedis(t).URL()
	prefix := "other" + strconv.FormatInt(stores.Add(1), 10) + ":"
	var ss [2]*redisstore.Store
	for i := range ss {
		s, err := redisstore.Open(url, redisstore.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		ss[i] = s
	}
	ctx := context.Background()
	req := reference.Record{Key: "key", Operation: "orders.create", Fingerprint: "sha256:f", RawDigest: [32]byte{7}}
	rec, created, err := ss[0].Create(ctx, "id", req, time.Minute)
	if err != nil || !created {
		t.Fatalf("Create = %v, %v", created, err)
	}
	if err := ss[1].Finish(ctx, "id", "not-the-token", reference.Completed, reference.Result{}, time.Hour); !errors.Is(err, reference.ErrLeaseLost) {
		t.Errorf("Finish with another token = %v, want ErrLeaseLost", err)
	}
	res := reference.Result{Response: reference.Response{Status: 201, Body: []byte("made")}}
	if err := ss[1].Finish(ctx, "id", rec.Token, reference.Completed, res, time.Hour); err != nil {
		t.Fatal(err)
	}
	got, found, err := ss[0].Get(ctx, "id")
	if err != nil || !found || got.State != reference.Completed || got.Token != rec.Token || got.Key != "key" || got.Operation != "orders.create" ||
		got.Fingerprint != "sha256:f" || got.RawDigest != req.RawDigest || !got.CreatedAt.Equal(rec.CreatedAt) || string(got.Response.Body) != "made" {
		t.Errorf("Get = %+v, %v, %v; want the record created as %+v, completed", got, found, err, rec)
	}
	// The creating store finishes from what it remembers: too late now.
	if err := ss[0].Finish(ctx, "id", rec.Token, reference.Failed, reference.Result{}, time.Hour); !errors.Is(err, reference.ErrInvalidTransition) {
		t.Errorf("Finish of a finished record = %v, want ErrInvalidTransition", err)
	}
	client := redisstore.NewTestClient(t, url)
	keys, err := client.Do(ctx, client.B().Keys().Pattern(prefix+"*").Build()).AsStrSlice()
	if err != nil || len(keys) != 1 || !strings.HasPrefix(keys[0], prefix+"{") || !strings.HasSuffix(keys[0], "}id") {
		t.Errorf("keys under the prefix: %q, %v; want the record's alone", keys, err)
	}
}
