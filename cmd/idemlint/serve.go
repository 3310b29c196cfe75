package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/reference/server"
)

// releaseGrace is how long handlers cut at the shutdown timeout have to
// return and release their keys.
const releaseGrace = 5 * time.Second

// serveOptions are the flags of "idemlint serve".
type serveOptions struct {
	policy, addr, store string
	demoDelay           time.Duration
	shutdownTimeout     time.Duration
	readTimeout         time.Duration
	maxConnections      int
	maxBodyMemoryMiB    int64
	minBodyRate         int64
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
store that serve also logs at start: a store that can lose records (Redis
without a synced append-only file or evicting, PostgreSQL without fsync or
synchronous commit) lets a key run again.

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
	f.IntVar(&o.maxConnections, "max-connections", server.DefaultMaxConnections, "most client connections open at once; when all are taken, the longest idle one is closed for a new client, else one stalled before its first request, else the client waits")
	f.Int64Var(&o.maxBodyMemoryMiB, "max-body-memory", reference.DefaultMaxBodyMemory>>20, "MiB of request bodies held at once; beyond it a request waits a second, then gets 503")
	f.DurationVar(&o.readTimeout, "read-timeout", server.DefaultReadTimeout, "how long a client may take to send a request, body included")
	f.Int64Var(&o.minBodyRate, "min-body-rate", server.DefaultMinBodyRate, "bytes a second a request body must arrive at, after its first 2 seconds; a slower one is cut (0: no minimum)")
	_ = cmd.MarkFlagRequired("policy") // cannot fail: the flag exists
	return cmd
}

// serve runs the adapter until ctx ends or a signal arrives. It prints
// "listening on http://ADDR" to stdout once it accepts connections.
func serve(ctx context.Context, o serveOptions, stdout, stderr io.Writer) error {
	if o.maxConnections < 1 || o.maxBodyMemoryMiB < 1 || o.readTimeout <= 0 || o.demoDelay < 0 || o.shutdownTimeout <= 0 {
		return errors.New("--max-connections, --max-body-memory, --read-timeout and --shutdown-timeout must be positive, --demo-delay not negative")
	}
	if o.minBodyRate < 0 {
		return errors.New("--min-body-rate must not be negative")
	}
	minBodyRate := o.minBodyRate
	if minBodyRate == 0 {
		minBodyRate = -1 // off
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	store, closeStore, err := server.OpenStore(ctx, o.store)
	if err != nil {
		return err
	}
	if store == nil { // only the memory store keeps its records in this heap
		defer server.CollectForMemoryStore()()
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
	demo := reference.NewDemo(engine.Policy())
	demo.Delay = o.demoDelay
	demo.Warnings = server.StoreWarnings(ctx, store, logger)
	srv, err := server.Listen(o.addr, engine.Middleware(demo), server.Options{
		MaxConnections: o.maxConnections,
		ReadTimeout:    o.readTimeout,
		MinBodyRate:    minBodyRate,
		LongestHandler: engine.MaxWait() + o.demoDelay,
		Logger:         logger,
	})
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	if sweeper, ok := store.(server.ExpirySweeper); ok {
		go server.Sweep(handlers, sweeper, server.DefaultSweepEvery, logger)
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", srv.Addr())

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
