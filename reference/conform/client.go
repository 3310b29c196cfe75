package conform

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MaxResponseBytes bounds the response body conform reads; a larger one
// fails the probe instead of filling memory. At a high concurrency each
// body gets less (bodyLimit).
const MaxResponseBytes = 1 << 20

// MaxResponseHeaderBytes bounds the header section of a response. A
// target sending more fails the probe; Go's default of 10 MiB per
// response would let 256 concurrent answers take gigabytes.
const MaxResponseHeaderBytes = 64 << 10

// bodyBudget is what all response bodies read at once may take together:
// CF07 and CF18 hold up to Concurrency answers at a time.
const bodyBudget = 48 << 20

// bodyLimit is the largest response body conform reads at concurrency n.
func bodyLimit(n int) int { return min(MaxResponseBytes, bodyBudget/n) }

// errNoAnswer marks an exchange that got no HTTP answer at all.
var errNoAnswer = errors.New("no answer")

// request is one probe request.
type request struct {
	probe  string // probe id, for the verbose log
	op     *operation
	target int    // index of the target it goes to
	path   string // the operation's path with its parameters filled in, escaped
	key    string // the key header's value as sent; "" sends none
	// keys, when set, are sent as that many key header fields instead.
	keys   []string
	tenant string // the tenant header's value
	actor  string // the actor header's value
	body   []byte // nil sends none
	// wait marks a request that may wait on an attempt in flight, which
	// gets the longer timeout.
	wait bool
	// bare sends the operation's headers alone, without the extra, key,
	// tenant and actor headers: a browser's preflight carries none.
	bare bool
}

// response is what came back, or why nothing did.
type response struct {
	status int
	header http.Header
	body   []byte
	err    error     // no usable answer: the body is empty
	redact *redactor // for showing the body
}

// client sends probe requests within the bounds of a run. It is safe for
// concurrent use.
type client struct {
	http         *http.Client
	bases        []string // target base URLs without a trailing slash
	extra        http.Header
	keyHeader    string
	tenantHeader string
	actorHeader  string
	timeout      time.Duration
	waitTimeout  time.Duration
	bodyLimit    int
	redact       *redactor
	// effects reads the execution counter; nil when there is none.
	effects func(ctx context.Context) (int64, error)
	sent    atomic.Int64
	log     *requestLog // nil unless verbose
}

// newTransport is the network transport of a live run: no proxy (only the
// targets and the effects URL are ever contacted), TLS verified unless
// insecure, as many connections to a host as the concurrency, and a bound
// on response headers.
func newTransport(timeout time.Duration, concurrency int, insecure bool) *http.Transport {
	return &http.Transport{
		DialContext:            (&net.Dialer{Timeout: timeout}).DialContext,
		TLSClientConfig:        &tls.Config{InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12}, //nolint:gosec // only with --insecure
		TLSHandshakeTimeout:    timeout,
		ForceAttemptHTTP2:      true,
		MaxIdleConnsPerHost:    concurrency,
		MaxConnsPerHost:        concurrency,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
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
	req, resp := c.roundTrip(ctx, r)
	c.log.request(r, req, resp, time.Since(start))
	return resp
}

func (c *client) roundTrip(ctx context.Context, r *request) (http.Header, *response) {
	var body io.Reader
	if r.body != nil {
		body = opaqueBody{bytes.NewReader(r.body)}
	}
	req, err := http.NewRequestWithContext(ctx, r.op.Method, c.bases[r.target]+r.path, body)
	if err != nil {
		return nil, &response{err: err, redact: c.redact}
	}
	req.ContentLength = int64(len(r.body))
	req.Header = r.op.header.Clone()
	if !r.bare {
		c.addHeaders(req.Header, r)
	}
	status, header, b, err := c.exchange(ctx, req)
	return req.Header, &response{status: status, header: header, body: b, err: err, redact: c.redact}
}

// addHeaders adds the extra headers, r's key and its tenant and actor to h.
func (c *client) addHeaders(h http.Header, r *request) {
	for k, v := range c.extra {
		h[k] = v
	}
	switch {
	case r.keys != nil:
		h[textproto.CanonicalMIMEHeaderKey(c.keyHeader)] = r.keys
	case r.key != "":
		h.Set(c.keyHeader, r.key)
	}
	h.Set(c.tenantHeader, r.tenant)
	h.Set(c.actorHeader, r.actor)
}

// exchange sends req and reads at most bodyLimit bytes of the answer.
func (c *client) exchange(ctx context.Context, req *http.Request) (int, http.Header, []byte, error) {
	c.sent.Add(1)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%w: %w", errNoAnswer, cause(ctx, err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.bodyLimit)+1))
	switch {
	case err != nil:
		return 0, nil, nil, fmt.Errorf("%d answer cut short: %w", resp.StatusCode, cause(ctx, err))
	case len(b) > c.bodyLimit:
		return 0, nil, nil, fmt.Errorf("%d answer with a body over %d bytes", resp.StatusCode, c.bodyLimit)
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
			return 0, fmt.Errorf(`answered %s, want {"count": N}`, preview(body, c.redact, previewBytes))
		}
		return *v.Count, nil
	}
}

// requestLog is the verbose log: each request with its headers and body,
// and its answer, secrets redacted, every line within the output width.
type requestLog struct {
	mu      sync.Mutex
	w       io.Writer
	redact  *redactor
	targets int
}

func (l *requestLog) request(r *request, sent http.Header, resp *response, took time.Duration) {
	if l == nil {
		return
	}
	var b strings.Builder
	target := ""
	if l.targets > 1 {
		target = fmt.Sprintf(" (target %d)", r.target+1)
	}
	fmt.Fprintf(&b, "%s %s %s%s -> %s [%s]\n", r.probe, r.op.Method, r.path, target, resp.headline(), took.Round(10*time.Microsecond))
	for _, name := range slices.Sorted(maps.Keys(sent)) {
		for _, v := range sent[name] {
			fmt.Fprintf(&b, "%s> %s: %s\n", logIndent, name, v)
		}
	}
	if r.body != nil {
		fmt.Fprintf(&b, "%s> %s\n", logIndent, preview(r.body, l.redact, Width-len(logIndent)-2))
	}
	if resp.err == nil && len(resp.body) > 0 {
		fmt.Fprintf(&b, "%s< %s\n", logIndent, preview(resp.body, l.redact, Width-len(logIndent)-2))
	}
	text := l.redact.text(b.String()) // the extra headers, and errors quoting an echo
	l.mu.Lock()
	defer l.mu.Unlock()
	for line := range strings.Lines(text) {
		io.WriteString(l.w, fit(strings.TrimSuffix(line, "\n"), Width)+"\n") //nolint:errcheck // best effort, like any log
	}
}

const logIndent = "     "
