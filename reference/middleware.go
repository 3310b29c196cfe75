package reference

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"time"
)

// Middleware returns next behind the engine. A request subject to
// idempotency (see Handle) is read whole, fingerprinted and either
// refused, replayed, or passed to next with the body it sent; next's
// response is buffered until the attempt is recorded, then sent, so a
// client that retries at once finds the attempt finished. Streaming
// responses, trailers and connection hijacking are therefore not
// available to next on those requests. Every other request reaches next
// untouched.
func (e *Engine) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		op, idempotent := e.route(r.Method, r.URL.Path, r.Header)
		if !idempotent {
			e.bypass(w, r, next, op, start)
			return
		}
		reply := e.serve(r, op, next)
		reply.Write(w)
		e.logAccess(r, start, reply.Status, &reply)
	})
}

func (e *Engine) bypass(w http.ResponseWriter, r *http.Request, next http.Handler, op *operation, start time.Time) {
	if !e.accessEnabled(r.Context()) {
		next.ServeHTTP(w, r)
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	next.ServeHTTP(sw, r)
	reply := bypassed(op)
	e.logAccess(r, start, cmp.Or(sw.status, http.StatusOK), &reply)
}

// serve reads the body of a request subject to idempotency, within the
// engine's body memory, and runs it through the engine.
func (e *Engine) serve(r *http.Request, op *operation, next http.Handler) Reply {
	bp := getBuffer()
	defer putBuffer(bp)
	share := bodyShare{memory: e.bodyMemory}
	defer share.release()
	body, err := readBody(r.Context(), (*bp)[:0], r.Body, r.ContentLength, e.maxBody, &share)
	*bp = body
	if err != nil {
		reply := Reply{Operation: op.key, e: e}
		switch {
		case errors.Is(err, errTooLarge):
			return reply.refuse(e.tooLarge)
		case errors.Is(err, errNoBodyMemory):
			return reply.refuse(e.noBodyMemory)
		}
		return reply.refuse(e.unreadable)
	}
	share.keep(int64(len(body)))
	req := Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header, Body: body}
	return e.handle(r.Context(), op, &req, func(ctx context.Context) (Response, error) {
		return capture(next, r.WithContext(ctx), body), nil
	})
}

var errTooLarge = errors.New("request body too large")

// readBody appends the content of body (nil or http.NoBody is empty) to
// dst, refusing more than limit bytes. A positive size is the whole body,
// as net/http guarantees: a larger one is refused unread; any other size
// is unknown (a client's request may say 0). The memory the body may need
// (its size, or else the limit and the byte beyond it that proves a body
// too large) is taken from share in two steps: first bodyFirstChunk of
// it, and the rest once that much arrived. A body that trickles in, or
// never comes, thus holds bodyFirstChunk, not its announced size.
func readBody(ctx context.Context, dst []byte, body io.Reader, size, limit int64, share *bodyShare) ([]byte, error) {
	if body == nil || body == http.NoBody {
		return dst, nil
	}
	if size > limit {
		return dst, errTooLarge
	}
	need := size
	if size <= 0 {
		size, need = -1, min(limit, math.MaxInt64-1)+1
	}
	if err := share.take(ctx, min(need, bodyFirstChunk)); err != nil {
		return dst, err
	}
	for {
		if int64(len(dst)) == share.held {
			if err := share.take(ctx, need); err != nil {
				return dst, err
			}
			if size > 0 {
				dst = slices.Grow(dst, int(size)-len(dst))
			}
		}
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)] // grow geometrically
		}
		room := dst[len(dst):cap(dst)]
		if int64(len(room)) > share.held-int64(len(dst)) {
			room = room[:share.held-int64(len(dst))]
		}
		n, err := body.Read(room)
		dst = dst[:len(dst)+n]
		switch {
		case int64(len(dst)) > limit:
			return dst, errTooLarge
		case int64(len(dst)) == size || err == io.EOF:
			return dst, nil
		case err != nil:
			return dst, err
		}
	}
}

// capture runs next with the buffered body and records its response.
// The response body is copied out of the pooled buffer: it is stored.
func capture(next http.Handler, r *http.Request, body []byte) Response {
	// One allocation for both ends of next.
	var ends struct {
		in  bodyReader
		out captureWriter
	}
	ends.in.Reset(body)
	ends.out = captureWriter{header: make(http.Header), body: getBuffer()}
	r.Body = &ends.in
	cw := &ends.out
	defer putBuffer(cw.body)
	next.ServeHTTP(cw, r)
	resp := Response{Status: cmp.Or(cw.status, http.StatusOK), Header: cw.header, Body: bytes.Clone(*cw.body)}
	// net/http would sniff a missing Content-Type at write time; decide it
	// here so the first response and every replay agree.
	if _, set := resp.Header["Content-Type"]; !set && len(resp.Body) > 0 {
		resp.Header["Content-Type"] = []string{http.DetectContentType(resp.Body)}
	}
	return resp
}

// bodyReader is the buffered request body as next reads it.
type bodyReader struct{ bytes.Reader }

func (*bodyReader) Close() error { return nil }

// captureWriter is the ResponseWriter next writes to during an attempt.
type captureWriter struct {
	header http.Header
	status int
	body   *[]byte
}

func (c *captureWriter) Header() http.Header { return c.header }

func (c *captureWriter) WriteHeader(status int) {
	// Informational responses are not the result; net/http ignores a
	// second final status, and so do we.
	if c.status == 0 && status >= 200 {
		c.status = status
	}
}

func (c *captureWriter) Write(p []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	*c.body = append(*c.body, p...)
	return len(p), nil
}

// statusWriter notes the status of a bypassed request for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(status int) {
	if s.status == 0 && status >= 200 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// Flush keeps streaming handlers working behind the access log.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (e *Engine) accessEnabled(ctx context.Context) bool {
	return e.access != nil && e.access.Enabled(ctx, slog.LevelInfo)
}

// logAccess writes the one line per request that WithAccessLog asks for.
// The key is logged because the seeds require it to trace a retry: the
// bare key when it was valid, else the header as received.
func (e *Engine) logAccess(r *http.Request, start time.Time, status int, reply *Reply) {
	ctx := r.Context()
	if !e.accessEnabled(ctx) {
		return
	}
	key := reply.Key
	if key == "" {
		key = r.Header.Get(e.keyHeader)
	}
	// The record goes to the handler directly: Logger.LogAttrs would walk
	// the stack for the caller's source position, on every request, to
	// name logAccess.
	now := time.Now()
	rec := slog.NewRecord(now, slog.LevelInfo, "request", 0)
	rec.AddAttrs(
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.String("operation", reply.Operation),
		slog.String("idempotency_key", key),
		slog.String("outcome", reply.Outcome.String()),
		slog.Bool("replayed", reply.Outcome == Replayed),
		slog.Duration("duration", now.Sub(start)),
	)
	_ = e.access.Handler().Handle(ctx, rec) // as Logger does: nowhere to report a failure
}
