package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/pgstore"
	"github.com/idemlint/idemlint/reference/redisstore"
)

// Server limits of "idemlint serve": a stand-in, but one that must not
// hang on a slow client, hoard idle connections or run out of file
// descriptors.
const (
	readHeaderTimeout = 10 * time.Second
	// defaultReadTimeout covers a whole request: a 1 MiB body at 35 KB/s.
	// It is also how long a stalled client holds its body's memory.
	defaultReadTimeout = 30 * time.Second
	// writeSlack is added to the longest a request may legitimately take
	// (waiting for an attempt in flight, the demo's delay) to bound the
	// time to write its answer.
	writeSlack  = 30 * time.Second
	idleTimeout = 60 * time.Second
	// maxHeaderBytes: keys are at most 8192 characters (spec 6.2); 64 KiB
	// leaves room for any sane request and refuses header floods.
	maxHeaderBytes = 64 << 10
	// storeSweepEvery is how often serve removes dead rows from a
	// PostgreSQL store (Redis and memory stores expire on their own).
	storeSweepEvery = 5 * time.Minute
	// memoryStoreGCPercent is serve's GOGC on the memory store unless
	// the environment sets one. The heap is then mostly records kept for
	// ttl, and at the default of 100 it grows to twice them before a
	// collection; 50 keeps the peak at one and a half times for about a
	// quarter more CPU (1,000,000 keys at max_records 100,000: peak RSS
	// 393-400 MB at 100, 298-303 MB at 50).
	memoryStoreGCPercent = 50
	// releaseGrace is how long handlers cut at the shutdown timeout have
	// to return and release their keys.
	releaseGrace = 5 * time.Second
)

// collectForMemoryStore sets the collector to memoryStoreGCPercent unless
// the environment sets GOGC, and returns the function that restores it.
func collectForMemoryStore() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	old := debug.SetGCPercent(memoryStoreGCPercent)
	return func() { debug.SetGCPercent(old) }
}

// serveOptions are the flags of "idemlint serve".
type serveOptions struct {
	policy, addr, store string
	demoDelay           time.Duration
	shutdownTimeout     time.Duration
	readTimeout         time.Duration
	maxConnections      int
	maxBodyMemoryMiB    int64
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve --policy FILE [--addr HOST:PORT] [--store memory|redis://...|postgres://...]",
		Short: "Run the reference engine as a local adapter in front of a demo handler",
		Long: `Serve runs the reference idempotency engine, configured from an adapter policy
(an adapter document, or a gateway_to_adapter document with an embedded
adapter policy), in front of a demo handler that answers every operation the
policy declares at its method and path: a state-changing operation answers 201
with a fresh id and the request body it received, a read-only one a page of what
was created (?offset=, ?limit=). GET /_effects answers {"count": N}, how many
times the demo really ran, so "idemlint conform" can be tried end to end.
GET /_health answers {"status": "ok"}, or "warn" with the warnings about the
store that serve also logs at start: a Redis without an append-only file or
that may evict records lets a key run again.

--store keeps the records in memory (the default; lost on restart), or in
Redis or PostgreSQL, so that several serve processes on one store act as the
replicas of one adapter: a duplicate sent to any of them replays the first
attempt, and the attempt of a replica that died is taken over by the next
duplicate once its lease (idempotency_inflight.lease_ms) lapsed.

It logs one line per request to stderr, with the idempotency key. It refuses to
start when the policy has an error finding (exit status 2). On SIGINT or
SIGTERM it stops accepting requests and lets those in flight finish for
--shutdown-timeout, and within it waits until the end of every attempt is
recorded in the store (a store that failed is retried). Requests still running
then are cut: their attempts are released, never stored as failures, so a
retry executes them. Exit status 0 when all finished and were recorded, 1 when
some had to be cut or could not be recorded (their keys are logged: each may
run again once its lease lapses).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.policy, "policy", "", "adapter policy file (required)")
	f.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on; port 0 picks a free one")
	f.StringVar(&o.store, "store", "memory", "where records live: memory, redis://HOST:PORT[/DB], rediss://..., unix:///PATH/redis.sock[?db=N], or postgres://USER@HOST/DB")
	f.DurationVar(&o.demoDelay, "demo-delay", 0, "how long the demo takes for a state-changing operation, e.g. 2s")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long requests in flight may finish after SIGINT or SIGTERM")
	f.IntVar(&o.maxConnections, "max-connections", 1024, "most client connections open at once; more wait to be accepted")
	f.Int64Var(&o.maxBodyMemoryMiB, "max-body-memory", reference.DefaultMaxBodyMemory>>20, "MiB of request bodies held at once; beyond it a request waits a second, then gets 503")
	f.DurationVar(&o.readTimeout, "read-timeout", defaultReadTimeout, "how long a client may take to send a request, body included")
	_ = cmd.MarkFlagRequired("policy") // cannot fail: the flag exists
	return cmd
}

// serve runs the adapter until ctx ends or a signal arrives. It prints
// "listening on http://ADDR" to stdout once it accepts connections.
func serve(ctx context.Context, o serveOptions, stdout, stderr io.Writer) error {
	if o.maxConnections < 1 || o.maxBodyMemoryMiB < 1 || o.readTimeout <= 0 || o.demoDelay < 0 || o.shutdownTimeout <= 0 {
		return errors.New("--max-connections, --max-body-memory, --read-timeout and --shutdown-timeout must be positive, --demo-delay not negative")
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	store, closeStore, err := openStore(ctx, o.store)
	if err != nil {
		return err
	}
	if store == nil { // only the memory store keeps its records in this heap
		defer collectForMemoryStore()()
	}
	defer closeStore()

	// Handlers outlive their clients; they end when shutdown gives up
	// waiting for them.
	handlers, cutHandlers := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cutHandlers(nil)
	opts := []reference.Option{reference.WithLogger(logger), reference.WithAccessLog(logger), reference.WithBaseContext(handlers), reference.WithMaxBodyMemory(min(o.maxBodyMemoryMiB, math.MaxInt64>>20) << 20)}
	if store != nil {
		opts = append(opts, reference.WithStore(store))
	}
	engine, err := reference.Load(o.policy, opts...)
	var invalid *reference.InvalidPolicyError
	switch {
	case errors.As(err, &invalid):
		fmt.Fprintf(stderr, "idemlint: refusing to serve: %v\n", err)
		return exitCode(exitUsage)
	case err != nil:
		return err
	}

	// Catch the signals before announcing the address: from then on a
	// supervisor may stop us at any time.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	demo := reference.NewDemo(engine.Policy())
	demo.Delay = o.demoDelay
	demo.Warnings = storeWarnings(ctx, store, logger)
	srv := &http.Server{
		Handler:           engine.Middleware(demo),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       o.readTimeout,
		WriteTimeout:      engine.MaxWait() + o.demoDelay + writeSlack,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelError),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(limitListener(ln, o.maxConnections)) }()
	if sweeper, ok := store.(expirySweeper); ok {
		go sweepStore(handlers, sweeper, logger)
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", o.shutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdownTimeout)
	defer cancel()
	cut := srv.Shutdown(shutdownCtx) != nil
	if cut {
		cutHandlers(errors.New("serve is shutting down"))
		srv.Close()
		logger.Error("shutdown cut requests still in flight", "timeout", o.shutdownTimeout)
		var cancelGrace context.CancelFunc
		shutdownCtx, cancelGrace = context.WithTimeout(context.WithoutCancel(ctx), releaseGrace)
		defer cancelGrace()
	}
	var unrecorded *reference.UnrecordedError
	if errors.As(engine.Drain(shutdownCtx), &unrecorded) {
		for _, a := range unrecorded.Attempts {
			logger.Error("shutdown: the end of the attempt could not be recorded; its key may run again once its lease lapses", "operation", a.Operation, "idempotency_key", a.Key)
		}
		return exitCode(exitFindings)
	}
	if cut {
		return exitCode(exitFindings)
	}
	<-served // http.ErrServerClosed
	return nil
}

// openStore opens the store that --store names; nil for memory, which the
// engine creates itself with the policy's max_records.
func openStore(ctx context.Context, raw string) (reference.Store, func(), error) {
	noop := func() {}
	scheme, _, _ := strings.Cut(raw, "://")
	switch scheme {
	case "memory":
		return nil, noop, nil
	case "redis", "rediss", "unix":
		s, err := redisstore.Open(raw, redisstore.Options{})
		if err != nil {
			return nil, noop, redactURL(err, raw)
		}
		return s, s.Close, nil
	case "postgres", "postgresql":
		openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		s, err := pgstore.Open(openCtx, raw, pgstore.Options{})
		if err != nil {
			return nil, noop, redactURL(err, raw)
		}
		return s, s.Close, nil
	}
	return nil, noop, errors.New(`--store must be "memory", a redis://, rediss:// or unix:// URL, or a postgres:// URL`)
}

// redactURL returns err with every form of the password in raw replaced,
// as the drivers' messages may quote the URL they were given.
func redactURL(err error, raw string) error {
	msg := err.Error()
	u, perr := url.Parse(raw)
	if perr != nil {
		// Unparsable: the whole URL may be quoted, password and all.
		return errors.New(strings.ReplaceAll(msg, raw, "(the --store URL)"))
	}
	var secrets []string
	if p, ok := u.User.Password(); ok {
		secrets = append(secrets, p)
	}
	secrets = append(secrets, u.Query()["password"]...)
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for _, form := range []string{s, url.PathEscape(s), url.QueryEscape(s), url.UserPassword("", s).String()[1:]} {
			msg = strings.ReplaceAll(msg, form, "xxxxx")
		}
	}
	return errors.New(msg)
}

// expirySweeper is a store whose dead records stay until removed.
type expirySweeper interface {
	DeleteExpired(context.Context) (int64, error)
}

func sweepStore(ctx context.Context, s expirySweeper, logger *slog.Logger) {
	tick := time.NewTicker(storeSweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if _, err := s.DeleteExpired(ctx); err != nil {
				logger.Error("idempotency store: removing expired records failed", "error", err)
			}
		}
	}
}

// limitListener accepts at most n connections at once; further clients
// wait in the kernel's backlog until one closes, so a flood of idle
// connections cannot exhaust file descriptors or memory.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limitedListener{Listener: ln, slots: make(chan struct{}, n), closed: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	slots     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func (l *limitedListener) Accept() (net.Conn, error) {
	// Waiting for a slot must end with the listener: http.Server's
	// Shutdown waits for Serve to return before it closes idle
	// connections, which are what would free a slot.
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	c.release()
	return c.Conn.Close()
}
