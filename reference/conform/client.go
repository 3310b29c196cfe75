package conform

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MaxResponseBytes bounds the response body conform reads; a larger one
// fails the probe instead of filling memory.
const MaxResponseBytes = 1 << 20

// request is one probe request.
type request struct {
	probe  string // probe id, for the verbose log
	op     *operation
	path   string // the operation's path with its parameters filled in, escaped
	key    string // the key header's value as sent; "" sends none
	tenant string // the tenant header's value
	body   []byte // nil sends none
	// wait marks a request that may wait on an attempt in flight, which
	// gets the longer timeout.
	wait bool
}

// response is what came back, or why nothing did.
type response struct {
	status int
	header http.Header
	body   []byte
	err    error // no usable answer: the body is empty
}

// client sends probe requests within the bounds of a run. It is safe for
// concurrent use.
type client struct {
	http         *http.Client
	base         string // target base URL without a trailing slash
	extra        http.Header
	keyHeader    string
	tenantHeader string
	actorHeader  string
	actor        string
	timeout      time.Duration
	waitTimeout  time.Duration
	// effects reads the execution counter; nil when there is none.
	effects func(ctx context.Context) (int64, error)
	sent    atomic.Int64
	log     *lineLog // nil unless verbose
}

// newTransport is the network transport of a live run: no proxy (only the
// target and the effects URL are ever contacted), TLS verified unless
// insecure, as many connections to a host as the concurrency.
func newTransport(timeout time.Duration, concurrency int, insecure bool) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: timeout}).DialContext,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12}, //nolint:gosec // only with --insecure
		TLSHandshakeTimeout: timeout,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: concurrency,
		MaxConnsPerHost:     concurrency,
	}
}

// newHTTPClient wraps rt in a client that never follows a redirect: a
// redirect is the answer the probe observes. Following one could only
// send a probe to another URL, possibly on another host, than the policy
// describes.
func newHTTPClient(rt http.RoundTripper) *http.Client {
	return &http.Client{
		Transport:     rt,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// opaqueBody hides the bytes.Reader from http.NewRequest, which would
// otherwise set GetBody and let net/http resend a request carrying an
// idempotency key by itself after a connection failure. Each request
// conform counts must be exactly one request the target saw.
type opaqueBody struct{ io.Reader }

// do sends r and reads the answer within the request timeout.
func (c *client) do(ctx context.Context, r *request) *response {
	timeout := c.timeout
	if r.wait {
		timeout = c.waitTimeout
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("timed out after %s", timeout))
	defer cancel()
	start := time.Now()
	resp := c.roundTrip(ctx, r)
	c.log.request(r, resp, time.Since(start))
	return resp
}

func (c *client) roundTrip(ctx context.Context, r *request) *response {
	var body io.Reader
	if r.body != nil {
		body = opaqueBody{bytes.NewReader(r.body)}
	}
	req, err := http.NewRequestWithContext(ctx, r.op.Method.Value, c.base+r.path, body)
	if err != nil {
		return &response{err: err}
	}
	req.ContentLength = int64(len(r.body))
	req.Header = r.op.header.Clone()
	for k, v := range c.extra {
		req.Header[k] = v
	}
	if r.key != "" {
		req.Header.Set(c.keyHeader, r.key)
	}
	req.Header.Set(c.tenantHeader, r.tenant)
	req.Header.Set(c.actorHeader, c.actor)
	status, header, b, err := c.exchange(ctx, req)
	return &response{status: status, header: header, body: b, err: err}
}

// exchange sends req and reads at most MaxResponseBytes of the answer.
func (c *client) exchange(ctx context.Context, req *http.Request) (int, http.Header, []byte, error) {
	c.sent.Add(1)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("no answer: %w", cause(ctx, err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	switch {
	case err != nil:
		return 0, nil, nil, fmt.Errorf("%d answer cut short: %w", resp.StatusCode, cause(ctx, err))
	case len(b) > MaxResponseBytes:
		return 0, nil, nil, fmt.Errorf("%d answer with a body over %d bytes", resp.StatusCode, MaxResponseBytes)
	}
	return resp.StatusCode, resp.Header, b, nil
}

// cause explains a failed exchange: the timeout or the run deadline that
// ended it, or the transport's own error without the "Post URL:" prefix
// every line would otherwise repeat.
func cause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// countEffects returns a counter that reads {"count": N} from u.
func (c *client) countEffects(u string) func(context.Context) (int64, error) {
	return func(ctx context.Context) (int64, error) {
		ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, fmt.Errorf("timed out after %s", c.timeout))
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return 0, err
		}
		req.Header = c.extra.Clone()
		status, _, body, err := c.exchange(ctx, req)
		if err != nil {
			return 0, err
		}
		if status != http.StatusOK {
			return 0, fmt.Errorf("answered %d, want 200", status)
		}
		var v struct {
			Count *int64 `json:"count"`
		}
		if err := json.Unmarshal(body, &v); err != nil || v.Count == nil {
			return 0, fmt.Errorf(`answered %s, want {"count": N}`, preview(body))
		}
		return *v.Count, nil
	}
}

// lineLog is the verbose log: one line per request, secrets redacted.
type lineLog struct {
	mu     sync.Mutex
	w      io.Writer
	redact *strings.Replacer
}

func (l *lineLog) request(r *request, resp *response, took time.Duration) {
	if l == nil {
		return
	}
	key := "no key"
	if r.key != "" {
		key = "key " + r.key
	}
	got := resp.summary()
	line := fmt.Sprintf("%s %s %s (%s, tenant %s) -> %s [%s]\n", r.probe, r.op.Method.Value, r.path, key, r.tenant, got, took.Round(10*time.Microsecond))
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, l.redact.Replace(line)) //nolint:errcheck // best effort, like any log
}
