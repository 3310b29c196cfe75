package server

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

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/reference"
)

// releaseGrace is how long handlers cut at the shutdown timeout have to
// return and release their keys.
const releaseGrace = 5 * time.Second

// Config is what "idemlint serve" runs, its flags' values.
type Config struct {
	Policy, Addr, Store string
	DemoDelay           time.Duration
	ShutdownTimeout     time.Duration
	ReadTimeout         time.Duration
	MaxConnections      int
	MaxBodyMemoryMiB    int64
	MinBodyRate         int64 // 0: no minimum
	// Checks, when set, are the checks the policy goes through
	// (reference.WithChecks); nil, the core rules with the default limits.
	// They are the program's, not a setting a file could carry.
	Checks *checks.Options `json:"-"`
}

// DefaultConfig returns the settings "idemlint serve" runs with when no
// flag changes them; the policy is for the caller to give.
func DefaultConfig() Config {
	return Config{
		Addr:             "127.0.0.1:8080",
		Store:            "memory",
		ShutdownTimeout:  10 * time.Second,
		ReadTimeout:      DefaultReadTimeout,
		MaxConnections:   DefaultMaxConnections,
		MaxBodyMemoryMiB: reference.DefaultMaxBodyMemory >> 20,
		MinBodyRate:      DefaultMinBodyRate,
	}
}

// ErrUnfinished ends a run whose shutdown cut requests still in flight,
// or could not record the end of some attempts (their keys are logged:
// each may run again once its lease lapses).
var ErrUnfinished = errors.New("serve: requests were cut or not recorded at shutdown")

// Run serves the reference engine configured from c.Policy in front of a
// reference.Demo until ctx ends or SIGINT or SIGTERM arrives, logging to
// stderr (the access log within LogFlushDelay, all of it by the time Run
// returns). It prints "listening on http://ADDR" to stdout once it accepts
// connections. Settings out of range are an error naming their flags; a
// policy the engine refuses, "refusing to serve: " and its
// *reference.InvalidPolicyError; a shutdown that left work unfinished,
// ErrUnfinished.
func Run(ctx context.Context, c Config, stdout, stderr io.Writer) error {
	if err := c.validate(); err != nil {
		return err
	}
	minBodyRate := c.MinBodyRate
	if minBodyRate == 0 {
		minBodyRate = -1 // off
	}
	// The access log, a line per request, is buffered; every other line
	// goes out at once. Closed last, so that no line is lost at exit.
	logs := NewLogBuffer(stderr)
	defer logs.Close()
	logger := slog.New(slog.NewTextHandler(logs.Direct(), nil))
	store, closeStore, err := OpenStore(ctx, c.Store)
	if err != nil {
		return err
	}
	if store == nil { // only the memory store keeps its records in this heap
		defer CollectForMemoryStore()()
	} else {
		defer CollectForExternalStore()()
	}
	defer closeStore()

	// Handlers outlive their clients; they end when shutdown gives up
	// waiting for them.
	handlers, cutHandlers := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cutHandlers(nil)
	opts := []reference.Option{reference.WithLogger(logger), reference.WithAccessLog(slog.New(slog.NewTextHandler(logs, nil))), reference.WithBaseContext(handlers), reference.WithMaxBodyMemory(min(c.MaxBodyMemoryMiB, math.MaxInt64>>20) << 20)}
	if store != nil {
		opts = append(opts, reference.WithStore(store))
	}
	if c.Checks != nil {
		opts = append(opts, reference.WithChecks(*c.Checks))
	}
	engine, err := reference.Load(c.Policy, opts...)
	if invalid := (*reference.InvalidPolicyError)(nil); errors.As(err, &invalid) {
		return fmt.Errorf("refusing to serve: %w", err)
	}
	if err != nil {
		return err
	}

	// Catch the signals before announcing the address: from then on a
	// supervisor may stop us at any time.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	demo := reference.NewDemo(engine.Policy())
	demo.Delay = c.DemoDelay
	demo.Warnings = StoreWarnings(ctx, store, logger)
	demo.Leases = engine.LeaseStats
	srv, err := Listen(c.Addr, engine.Middleware(demo), Options{
		MaxConnections: c.MaxConnections,
		ReadTimeout:    c.ReadTimeout,
		MinBodyRate:    minBodyRate,
		LongestHandler: engine.MaxWait() + c.DemoDelay,
		Logger:         logger,
	})
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	if sweeper, ok := store.(ExpirySweeper); ok {
		go Sweep(handlers, sweeper, DefaultSweepEvery, logger)
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", srv.Addr())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", c.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.ShutdownTimeout)
	defer cancel()
	cut := srv.Shutdown(shutdownCtx) != nil
	if cut {
		cutHandlers(errors.New("serve is shutting down"))
		srv.Close()
		logger.Error("shutdown cut requests still in flight", "timeout", c.ShutdownTimeout)
		var cancelGrace context.CancelFunc
		shutdownCtx, cancelGrace = context.WithTimeout(context.WithoutCancel(ctx), releaseGrace)
		defer cancelGrace()
	}
	var unrecorded *reference.UnrecordedError
	if errors.As(engine.Drain(shutdownCtx), &unrecorded) {
		for _, a := range unrecorded.Attempts {
			logger.Error("shutdown: the end of the attempt could not be recorded; its key may run again once its lease lapses", "operation", a.Operation, "idempotency_key", a.Key)
		}
		return ErrUnfinished
	}
	if cut {
		return ErrUnfinished
	}
	<-served // http.ErrServerClosed
	return nil
}
