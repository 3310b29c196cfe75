package reference

import (
	"bytes"
	"context"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// body1KB is a realistic 1 KiB order: nested objects, an array, numbers
// with fractions and escaped strings.
var body1KB = func() []byte {
	var b strings.Builder
	b.WriteString(`{"customerId":"C-000123","currency":"EUR","note":"leave at the door \u00e9\n","items":[`)
	for i := 0; b.Len() < 1000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"sku":"P-` + strconv.Itoa(1000+i) + `","qty":` + strconv.Itoa(i%5+1) + `,"price":19.99,"gift":false}`)
	}
	b.WriteString(`],"total":123.45}`)
	return []byte(b.String())
}()

var created1KB = Response{Status: http.StatusCreated, Header: http.Header{"Content-Type": {"application/json"}}, Body: bytes.Repeat([]byte("x"), 1024)}

func orderRequest(key string) *Request {
	return &Request{
		Method: "POST", Path: "/orders",
		Header: http.Header{"X-Idempotency-Key": {key}, "X-Tenant-Id": {"tenant-a"}, "X-Actor-Id": {"user-1"}, "Content-Type": {"application/json"}},
		Body:   body1KB,
	}
}

func respond(context.Context) (Response, error) { return created1KB, nil }

func BenchmarkFingerprint1KB(b *testing.B) {
	e := newEngine(b, nil)
	req := orderRequest("k")
	b.SetBytes(int64(len(body1KB)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.fp.fingerprint(req); err != nil {
			b.Fatal(err)
		}
	}
}

// form1KB is a 1 KiB Stripe-style form as Stripe's SDKs send one: the
// fields of an order, nested names in brackets percent-encoded, a value
// with "+" and a %XX, in the order the client wrote them (items[10]
// before items[2] in byte order).
var form1KB = func() []byte {
	var b strings.Builder
	b.WriteString("customer=cus_000123&currency=eur&description=leave+at+the+door+%C3%A9&")
	for i := 0; b.Len() < 1000; i++ {
		n := strconv.Itoa(i)
		b.WriteString("items%5B" + n + "%5D%5Bprice%5D=price_" + strconv.Itoa(1000+i) + "&items%5B" + n + "%5D%5Bquantity%5D=" + strconv.Itoa(i%5+1) + "&")
	}
	b.WriteString("metadata%5Border_id%5D=6735")
	return []byte(b.String())
}()

// BenchmarkFingerprintForm1KB is BenchmarkFingerprint1KB for a form body
// read by canonical_form: it should cost no more.
func BenchmarkFingerprintForm1KB(b *testing.B) {
	e := newEngine(b, formPolicy)
	req := orderRequest("k")
	req.Header = req.Header.Clone()
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Body = form1KB
	b.SetBytes(int64(len(form1KB)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.fp.fingerprint(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEngineReplay1KB(b *testing.B) {
	e := newEngine(b, nil)
	req := orderRequest("replayed-key")
	ctx := context.Background()
	if r := e.Handle(ctx, req, respond); r.Outcome != Executed {
		b.Fatalf("first: %v", r.Outcome)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := e.Handle(ctx, req, respond); r.Outcome != Replayed {
			b.Fatalf("outcome %v", r.Outcome)
		}
	}
}

// BenchmarkEngineReplayReserialised1KB replays a retry whose body is
// spelt differently from the first attempt's, so the raw digest shortcut
// does not apply and the body is canonicalised.
func BenchmarkEngineReplayReserialised1KB(b *testing.B) {
	e := newEngine(b, nil)
	ctx := context.Background()
	e.Handle(ctx, orderRequest("replayed-key"), respond)
	req := orderRequest("replayed-key")
	req.Body = bytes.ReplaceAll(body1KB, []byte(","), []byte(", "))
	b.ReportAllocs()
	for b.Loop() {
		if r := e.Handle(ctx, req, respond); r.Outcome != Replayed {
			b.Fatalf("outcome %v", r.Outcome)
		}
	}
}

// BenchmarkEngineFresh1KB executes a new key each time; making the key
// string costs one of the allocations reported.
func BenchmarkEngineFresh1KB(b *testing.B) {
	e := newEngine(b, nil)
	req := orderRequest("")
	keyValues := req.Header["X-Idempotency-Key"]
	ctx := context.Background()
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		n++
		keyValues[0] = "fresh-" + strconv.Itoa(n)
		if r := e.Handle(ctx, req, respond); r.Outcome != Executed {
			b.Fatalf("outcome %v", r.Outcome)
		}
	}
}

// BenchmarkEngineContention64Hot: 64 goroutines replaying one key at
// once, all contending for its shard.
func BenchmarkEngineContention64Hot(b *testing.B) {
	e := newEngine(b, nil)
	ctx := context.Background()
	e.Handle(ctx, orderRequest("hot"), respond)
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := orderRequest("hot")
		for pb.Next() {
			if r := e.Handle(ctx, req, respond); r.Outcome != Replayed {
				b.Errorf("outcome %v", r.Outcome)
			}
		}
	})
}

// BenchmarkEngineContention64Fresh: rounds of 64 concurrent requests with
// one new key: one executes, 63 wait for it and replay. An op is one
// request; goroutine start-up is included.
func BenchmarkEngineContention64Fresh(b *testing.B) {
	const n = 64
	e := newEngine(b, nil)
	ctx := context.Background()
	var executed atomic.Int64
	run := func(context.Context) (Response, error) {
		executed.Add(1)
		return created1KB, nil
	}
	b.ReportAllocs()
	b.ResetTimer()
	rounds := (b.N + n - 1) / n
	for round := range rounds {
		key := "round-" + strconv.Itoa(round)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() { e.Handle(ctx, orderRequest(key), run) })
		}
		wg.Wait()
	}
	b.StopTimer()
	if got := executed.Load(); got != int64(rounds) {
		b.Fatalf("%d executions for %d keys", got, rounds)
	}
}

// rewindBody is a request body the benchmarks can reset without
// allocating.
type rewindBody struct{ bytes.Reader }

func (*rewindBody) Close() error { return nil }

// discardWriter is a ResponseWriter that keeps nothing but its header map.
type discardWriter struct{ header http.Header }

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

func benchmarkMiddleware(b *testing.B, nextKey func() string) {
	e := newEngine(b, nil)
	h := e.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write(created1KB.Body)
	}))
	body := &rewindBody{}
	r, err := http.NewRequest("POST", "http://adapter/orders", body)
	if err != nil {
		b.Fatal(err)
	}
	r.Header = orderRequest("").Header
	keyValues := r.Header["X-Idempotency-Key"]
	w := &discardWriter{header: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		keyValues[0] = nextKey()
		body.Reset(body1KB)
		clear(w.header)
		h.ServeHTTP(w, r)
	}
}

func BenchmarkMiddlewareReplay1KB(b *testing.B) {
	benchmarkMiddleware(b, func() string { return "replayed-key" })
}

func BenchmarkMiddlewareFresh1KB(b *testing.B) {
	n := 0
	benchmarkMiddleware(b, func() string {
		n++
		return "fresh-" + strconv.Itoa(n)
	})
}
