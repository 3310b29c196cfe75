package server

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
)

type driverError struct{ msg string }

func (e *driverError) Error() string { return e.msg }

// TestRedactURL: every form in which a driver may quote the password is
// removed, and the driver's error is still there for errors.As.
func TestRedactURL(t *testing.T) {
	const secret = "p@ss word/é"
	raw := "postgres://user:" + url.PathEscape(secret) + "@db.example:5432/app?sslmode=disable"
	for _, form := range []string{secret, url.PathEscape(secret), url.QueryEscape(secret), url.UserPassword("", secret).String()[1:]} {
		cause := &driverError{"connect " + raw + " failed: password " + form + " rejected"}
		err := RedactURL(cause, raw)
		if strings.Contains(err.Error(), form) || !strings.Contains(err.Error(), "xxxxx") {
			t.Errorf("form %q: %q still holds it or lost the mask", form, err)
		}
		var de *driverError
		if !errors.As(err, &de) || de != cause {
			t.Errorf("form %q: the driver's error is not wrapped", form)
		}
	}

	// A password given as a query parameter.
	raw = "postgres://user@db/app?password=s3cret-pass-123"
	if err := RedactURL(errors.New("dial "+raw), raw); strings.Contains(err.Error(), "s3cret-pass-123") {
		t.Errorf("query password: %q", err)
	}
	// A URL that does not parse is replaced whole.
	raw = "postgres://user:s3cret-pass-123@[::1/db"
	if err := RedactURL(errors.New("bad "+raw), raw); err.Error() != "bad (the --store URL)" {
		t.Errorf("unparsable URL: %q", err)
	}
}

// TestOpenStoreErrors: an unknown scheme is refused, memory is nil, and a
// store that cannot be reached is reported without its password.
func TestOpenStoreErrors(t *testing.T) {
	ctx := context.Background()
	if s, closeStore, err := OpenStore(ctx, "memory"); s != nil || err != nil {
		t.Errorf("memory: %v, %v; want nil, nil", s, err)
	} else {
		closeStore()
	}
	if _, _, err := OpenStore(ctx, "mysql://db"); !errors.Is(err, ErrStoreURL) {
		t.Errorf("mysql: %v, want ErrStoreURL", err)
	}
	const secret = "s3cret-pass-123"
	for _, tt := range []struct{ store, want string }{
		{"redis://user:" + secret + "@127.0.0.1:port/0", "redis"},
		{"redis://user:" + secret + "@127.0.0.1:1/0", "redis"},
		{"postgres://user:" + secret + "@127.0.0.1:port/db", "postgres store"},
		{"postgres://user:" + secret + "@[::1/db", "postgres store"},
		{"postgres://user:" + secret + "@127.0.0.1:1/db?connect_timeout=5", "postgres store"},
		{"postgres://user@127.0.0.1:1/db?password=" + secret + "&connect_timeout=5", "postgres store"},
	} {
		s, _, err := OpenStore(ctx, tt.store)
		if err == nil {
			t.Errorf("%s: opened %T", tt.store, s)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %q, want it to mention %q and not the password", tt.store, err, tt.want)
		}
		if errors.Unwrap(err) == nil {
			t.Errorf("%s: the driver's error is dropped", tt.store)
		}
	}
}

type sweeper struct{ calls chan struct{} }

func (s *sweeper) DeleteExpired(ctx context.Context) (int64, error) {
	select {
	case s.calls <- struct{}{}:
	case <-ctx.Done():
	}
	return 0, errors.New("store down")
}

// TestSweep: the sweeper is called every interval, a failure is logged
// and the sweep goes on, and it stops with its context.
func TestSweep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sweeper{calls: make(chan struct{})}
	var log strings.Builder
	done := make(chan struct{})
	go func() { Sweep(ctx, s, 1, newTextLogger(&log)); close(done) }()
	<-s.calls
	<-s.calls // the failure did not stop it
	cancel()
	<-done
	if !strings.Contains(log.String(), "removing expired records failed") || !strings.Contains(log.String(), "store down") {
		t.Errorf("log %q does not report the failure", log.String())
	}
}
