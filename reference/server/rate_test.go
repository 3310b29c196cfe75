package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// bodyReader answers what reading the body gave, and sends the error to
// errs.
type bodyReader struct {
	errs chan error
	// after reading, the handler waits this long before answering (with
	// the connection watched by net/http for the client going away).
	after time.Duration
}

func (b *bodyReader) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, r.Body)
	b.errs <- err
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	select {
	case <-time.After(b.after):
	case <-r.Context().Done():
		http.Error(w, "cancelled", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintf(w, "%d", n)
}

// TestMinBodyRateCutsStalledBody: a body that stops arriving is cut after
// the grace, long before the read timeout, with an error that says why.
func TestMinBodyRateCutsStalledBody(t *testing.T) {
	h := &bodyReader{errs: make(chan error, 1)}
	s := startServer(t, h, Options{MinBodyRate: 1 << 10, BodyGrace: 50 * time.Millisecond, ReadTimeout: time.Hour}, 0)
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"a\":")
	select {
	case err := <-h.errs:
		if !errors.Is(err, ErrBodyTooSlow) {
			t.Errorf("reading the stalled body: %v, want ErrBodyTooSlow", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the stalled body was not cut")
	}
}

// TestMinBodyRateSparesSteadyBody: a body that keeps to the rate is read
// whole, and the connection is not cut while the handler then works
// longer than the rate would have allowed the body.
func TestMinBodyRateSparesSteadyBody(t *testing.T) {
	h := &bodyReader{errs: make(chan error, 1), after: 2 * time.Second}
	s := startServer(t, h, Options{MinBodyRate: 1 << 10, BodyGrace: time.Second, ReadTimeout: time.Hour}, 0)
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const parts, part = 5, 100 // 500 bytes over 200 ms: well above 1 KiB/s
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", parts*part)
	for range parts {
		io.WriteString(c, strings.Repeat("x", part))
		time.Sleep(40 * time.Millisecond)
	}
	if err := <-h.errs; err != nil {
		t.Fatalf("reading the steady body: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(got) != "500" {
		t.Errorf("answer %d %q, want 200 500", resp.StatusCode, got)
	}
}
