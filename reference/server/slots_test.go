package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference"
)

// slotsLoadEnv, set to 1, runs TestSlotsCannotBeHeld at the sizes of the
// issue that asked for it (10,000 idle keep-alive connections, 1,100
// slow-header ones, 70 slow bodies, at 1,024 connections); otherwise at
// a tenth of the connections, which shows the same in about a second.
const slotsLoadEnv = "IDEMLINT_SLOTS_LOAD"

// TestSlotsCannotBeHeld: while attackers hold connections idle, send
// headers or bodies slowly, a legitimate client is still answered. It
// logs how long the legitimate requests took (no timing is asserted:
// the machine may be loaded).
func TestSlotsCannotBeHeld(t *testing.T) {
	maxConns, idle, slowHeaders, slowBodies := 128, 1000, 140, 70
	if os.Getenv(slotsLoadEnv) == "1" {
		maxConns, idle, slowHeaders = DefaultMaxConnections, 10000, 1100
	}
	for _, tt := range []struct {
		name   string
		conns  int // the connections the attack holds at once
		attack func(t *testing.T, addr string, stop <-chan struct{})
	}{
		{fmt.Sprintf("%d idle keep-alive connections", idle), min(idle, maxConns), func(t *testing.T, addr string, _ <-chan struct{}) {
			holdIdle(t, addr, idle)
		}},
		{fmt.Sprintf("%d slow headers", slowHeaders), min(slowHeaders, maxConns), func(t *testing.T, addr string, stop <-chan struct{}) {
			keepAttacking(t, addr, slowHeaders, stop, func(c net.Conn) {
				io.WriteString(c, "POST /orders HTTP/1.1\r\nHost: x\r\nX-Slow: ")
			})
		}},
		{fmt.Sprintf("%d slow bodies", slowBodies), slowBodies, func(t *testing.T, addr string, stop <-chan struct{}) {
			n := 0
			var mu sync.Mutex
			keepAttacking(t, addr, slowBodies, stop, func(c net.Conn) {
				mu.Lock()
				n++
				key := "slow-" + strconv.Itoa(n)
				mu.Unlock()
				fmt.Fprintf(c, "POST /orders HTTP/1.1\r\nHost: x\r\nX-Idempotency-Key: %s\r\nContent-Length: %d\r\n\r\n{", key, reference.DefaultMaxBodyBytes)
				for range 60 { // a byte a second
					select {
					case <-stop:
						return
					case <-time.After(time.Second):
					}
					if _, err := io.WriteString(c, " "); err != nil {
						return
					}
				}
			})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			engine, err := reference.Load("../testdata/adapter.json", reference.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			s := startServer(t, engine.Middleware(reference.NewDemo(engine.Policy())), Options{MaxConnections: maxConns, Logger: slog.New(slog.DiscardHandler)}, 0)
			addr := s.Addr().String()
			stop := make(chan struct{})
			var attackers sync.WaitGroup
			attackers.Go(func() { tt.attack(t, addr, stop) })
			defer func() { close(stop); attackers.Wait() }()
			// Let the attack take its slots and the grace of the newest
			// connections pass: the legitimate client comes in the middle
			// of it, not at its start.
			eventually(t, "the attack holds its connections", func() bool { return s.listener.Held() >= tt.conns })
			time.Sleep(NewConnGrace)

			var slowest time.Duration
			for i := range 5 {
				took, err := legitimatePost(generous(t), addr, fmt.Sprintf("legit-%d", i))
				if err != nil {
					t.Fatalf("legitimate request %d: %v", i, err)
				}
				slowest = max(slowest, took)
			}
			t.Logf("slowest of 5 legitimate POSTs: %v", slowest)
		})
	}
}

// legitimatePost sends a 100 KB order on a new connection and returns
// how long the answer took.
func legitimatePost(ctx context.Context, addr, key string) (time.Duration, error) {
	body := `{"note":"` + strings.Repeat("x", 100<<10) + `"}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/orders", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-Idempotency-Key", key)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	took := time.Since(start)
	if resp.StatusCode != http.StatusCreated {
		return took, fmt.Errorf("%d %s", resp.StatusCode, answer)
	}
	return took, nil
}

// holdIdle opens n keep-alive connections, each sending one request and
// then staying idle, and keeps them open until the test ends. It returns
// once every one was answered.
func holdIdle(t *testing.T, addr string, n int) {
	var wg sync.WaitGroup
	const dialers = 8
	for d := range dialers {
		wg.Go(func() {
			for i := d; i < n; i += dialers {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Errorf("idle connection %d: %v", i, err)
					return
				}
				t.Cleanup(func() { c.Close() })
				io.WriteString(c, "GET /_effects HTTP/1.1\r\nHost: x\r\n\r\n")
				// Once answered, the connection is idle.
				c.SetReadDeadline(time.Now().Add(time.Minute))
				if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
					t.Errorf("idle connection %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// keepAttacking keeps n connections open that each run attack, opening a
// new one whenever the server closes one, until stop.
func keepAttacking(t *testing.T, addr string, n int, stop <-chan struct{}, attack func(net.Conn)) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.Dial("tcp", addr)
				if err != nil {
					select {
					case <-stop:
					case <-time.After(10 * time.Millisecond):
					}
					continue
				}
				closed := make(chan struct{})
				go func() { io.Copy(io.Discard, c); close(closed) }()
				attack(c)
				select {
				case <-stop:
				case <-closed:
				}
				c.Close()
			}
		})
	}
	wg.Wait()
}

// eventually waits, up to a generous deadline, for cond.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
