package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// MinBodyRate cuts a request whose body arrives slower than rate bytes a
// second, counted from when next is called after a grace period: the
// connection's read deadline is moved to when the body would fall below
// the rate, and never beyond readTimeout after the handler started. A
// stalled body thus holds its connection (and what next holds for it)
// for about grace, not for the whole read timeout. A Read cut this way
// fails with an error that says so. rate 0 or less returns next.
func MinBodyRate(next http.Handler, rate int64, grace, readTimeout time.Duration) http.Handler {
	if rate <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			start := time.Now()
			r.Body = &rateReader{
				ReadCloser: r.Body, rc: *http.NewResponseController(w), // one allocation less
				began: start, start: start.Add(grace), rate: rate, whole: start.Add(readTimeout),
			}
		}
		next.ServeHTTP(w, r)
	})
}

// rateReader is a request body held to a minimum rate.
type rateReader struct {
	io.ReadCloser
	rc    http.ResponseController
	began time.Time // when the handler started
	start time.Time // when the rate starts to count: began plus the grace
	rate  int64     // bytes a second
	whole time.Time // the deadline of the whole request
	read  int64
	set   time.Time // the deadline last set
	done  bool
}

// ErrBodyTooSlow is what a Read of a body cut by MinBodyRate wraps.
var ErrBodyTooSlow = errors.New("request body arrived too slowly")

func (b *rateReader) Read(p []byte) (int, error) {
	if b.done {
		return b.ReadCloser.Read(p)
	}
	// The next byte is due when the body read so far, plus that byte,
	// meets the rate.
	due := b.start.Add(time.Duration(float64(b.read+1) / float64(b.rate) * float64(time.Second)))
	if due.After(b.whole) {
		due = b.whole
	}
	if !due.Equal(b.set) {
		if err := b.rc.SetReadDeadline(due); err != nil {
			b.done = true // the connection cannot be held to a rate; let the server's timeouts do
		}
		b.set = due
	}
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	switch {
	case err == io.EOF:
		// The body is in: what reads the connection from now on (net/http
		// watches it for the client going away) has the whole request's
		// deadline, as without the rate.
		b.done = true
		b.rc.SetReadDeadline(b.whole) //nolint:errcheck // it was settable a moment ago
	case errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(b.whole):
		err = fmt.Errorf("%w: %d bytes in %v, below %d bytes a second: %w", ErrBodyTooSlow, b.read, time.Since(b.began).Round(time.Millisecond), b.rate, err)
	}
	return n, err
}
