package conform

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostileTarget answers the pre-flight GET / properly and every other
// request in turn with 20 MB of headers, an endless body, or headers and
// then one body byte every 50 ms. It writes from shared buffers, so its
// own memory stays small beside conform's.
func hostileTarget(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	floodHeaders := bytes.Repeat([]byte("X-Flood: "+strings.Repeat("h", 1000)+"\r\n"), 20_000) // 20 MB
	chunk := bytes.Repeat([]byte("b"), 64<<10)
	var turn atomic.Int64
	var conns sync.WaitGroup
	stop := make(chan struct{})
	t.Cleanup(func() {
		close(stop)
		ln.Close()
		conns.Wait()
	})
	serve := func(conn net.Conn) {
		defer conn.Close()
		req, err := http.ReadRequest(bufio.NewReader(conn))
		if err != nil {
			return
		}
		if req.URL.Path == "/" {
			fmt.Fprint(conn, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			return
		}
		switch turn.Add(1) % 3 {
		case 0:
			conn.Write([]byte("HTTP/1.1 200 OK\r\n"))
			conn.Write(floodHeaders)
		case 1:
			fmt.Fprint(conn, "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n\r\n")
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := conn.Write(chunk); err != nil {
					return
				}
			}
		default:
			fmt.Fprint(conn, "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n\r\n")
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := conn.Write([]byte("{")); err != nil {
					return
				}
			}
		}
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				serve(conn)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// goMemory is the memory the Go runtime holds from the system.
func goMemory() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// maxHostileMemory is what conform may hold at concurrency 256 against a
// hostile target (the bound), the target's own share included.
const maxHostileMemory = 200 << 20

// At the highest concurrency, a target that floods headers or bodies or
// drips its answer fails its probes, and conform's memory stays bounded:
// response headers and bodies are read only up to their limits. The peak
// is sampled while the run lasts.
func TestHostileTargetMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 256 concurrent requests to a hostile target")
	}
	base := hostileTarget(t)
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak.Store(max(peak.Load(), goMemory()))
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	rep := probeTarget(t, Config{Targets: []string{base}, Concurrency: MaxConcurrency, Timeout: time.Second, MaxDuration: 20 * time.Second})
	close(done)
	<-sampled
	t.Logf("peak Go memory during a run at concurrency %d against a hostile target: %.1f MB", MaxConcurrency, float64(peak.Load())/1e6)
	if peak.Load() > maxHostileMemory {
		t.Errorf("peak Go memory %d bytes, over %d", peak.Load(), maxHostileMemory)
	}
	gots := map[string]bool{}
	for _, r := range rep.Results {
		if r.Status == Pass {
			t.Errorf("%s passed against a hostile target", r.ID)
		}
		gots[r.Got] = true
	}
	for _, want := range []string{
		fmt.Sprintf("server response headers exceeded %d bytes; aborted", MaxResponseHeaderBytes),
		fmt.Sprintf("201 answer with a body over %d bytes", bodyLimit(MaxConcurrency)),
		"201 answer cut short: timed out after 1s",
	} {
		found := false
		for got := range gots {
			found = found || strings.Contains(got, want)
		}
		if !found {
			t.Errorf("no probe got %q; they got:\n%v", want, gots)
		}
	}
}
