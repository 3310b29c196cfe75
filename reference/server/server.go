// Package server runs an http.Handler the way "idemlint serve" runs the
// reference engine: on a listener with a bounded number of connections
// that cannot all be held by idle or slow clients, with timeouts on every
// phase of a request, plus the stores serve can open (OpenStore) and
// their upkeep (Sweep). The command only turns flags into Options.
package server

import (
	"cmp"
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Defaults of Options.
const (
	// DefaultReadHeaderTimeout bounds the time to send a request's
	// header: a slow-header client holds its slot at most this long, and
	// less when the slots run out (see Listener).
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout covers a whole request: a 1 MiB body at 35 KB/s.
	DefaultReadTimeout = 30 * time.Second
	// DefaultMinBodyRate is the slowest a body may arrive, after
	// DefaultBodyGrace (see MinBodyRate): a 1 MiB body in 4 minutes would
	// pass, a body trickling a byte a second is cut after about the
	// grace, so that it holds its memory no longer.
	DefaultMinBodyRate = 4 << 10
	// DefaultBodyGrace is how long a body may take before its rate counts:
	// a round trip and a client's start, with room.
	DefaultBodyGrace = 2 * time.Second
	// DefaultWriteSlack is added to the longest a request may legitimately
	// take (Options.LongestHandler) to bound the time to write its answer.
	DefaultWriteSlack = 30 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection idle this long;
	// before that, Listener closes it if its slot is needed.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxHeaderBytes: keys are at most 8192 characters
	// (docs/format.md, Bounds: one verdict for a policy);
	// 64 KiB leaves room for any sane request and refuses header floods.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxConnections is how many connections are open at once.
	DefaultMaxConnections = 1024
)

// Options configure a Server; zero fields take the defaults above.
type Options struct {
	MaxConnections    int
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	// MinBodyRate in bytes a second; negative turns the rate off.
	MinBodyRate int64
	BodyGrace   time.Duration
	// LongestHandler is the longest a request may legitimately take in the
	// handler (waiting for an attempt in flight, a slow operation); the
	// write timeout is that plus DefaultWriteSlack.
	LongestHandler time.Duration
	IdleTimeout    time.Duration
	MaxHeaderBytes int
	// Logger receives the http.Server's own errors; nil is slog.Default().
	Logger *slog.Logger
}

// Server is an http.Server on a Listener.
type Server struct {
	HTTP     *http.Server
	listener *Listener
}

// Listen listens on the TCP address addr and returns the server that will
// serve h there.
func Listen(addr string, h http.Handler, o Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return New(ln, h, o), nil
}

// New returns the server that will serve h on ln.
func New(ln net.Listener, h http.Handler, o Options) *Server {
	limited := NewListener(ln, cmp.Or(o.MaxConnections, DefaultMaxConnections))
	readTimeout := cmp.Or(o.ReadTimeout, DefaultReadTimeout)
	logger := cmp.Or(o.Logger, slog.Default())
	return &Server{
		listener: limited,
		HTTP: &http.Server{
			Handler:           MinBodyRate(h, cmp.Or(o.MinBodyRate, DefaultMinBodyRate), cmp.Or(o.BodyGrace, DefaultBodyGrace), readTimeout),
			ReadHeaderTimeout: cmp.Or(o.ReadHeaderTimeout, DefaultReadHeaderTimeout),
			ReadTimeout:       readTimeout,
			WriteTimeout:      o.LongestHandler + DefaultWriteSlack,
			IdleTimeout:       cmp.Or(o.IdleTimeout, DefaultIdleTimeout),
			MaxHeaderBytes:    cmp.Or(o.MaxHeaderBytes, DefaultMaxHeaderBytes),
			ConnState:         limited.ConnState,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelError),
		},
	}
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// Serve serves until Shutdown or Close; it then returns
// http.ErrServerClosed.
func (s *Server) Serve() error { return s.HTTP.Serve(s.listener) }

// Shutdown stops accepting and waits, until ctx ends, for the requests in
// flight; see http.Server.Shutdown.
func (s *Server) Shutdown(ctx context.Context) error { return s.HTTP.Shutdown(ctx) }

// Close closes the listener and every connection at once.
func (s *Server) Close() error { return s.HTTP.Close() }
