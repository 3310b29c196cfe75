package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/reference"
)

// Server limits of "idemlint serve": a local stand-in, but one that must
// not hang on a slow client or a stuck shutdown.
const (
	readHeaderTimeout = 10 * time.Second
	shutdownTimeout   = 5 * time.Second
)

func newServeCmd() *cobra.Command {
	var policy, addr string
	cmd := &cobra.Command{
		Use:   "serve --policy FILE [--addr HOST:PORT]",
		Short: "Run the reference engine as a local adapter in front of a demo handler",
		Long: `Serve runs the reference idempotency engine, configured from an adapter policy
(an adapter document, or a gateway_to_adapter document with an embedded
adapter policy), in front of a demo handler that answers every operation the
policy declares at its method and path: a state-changing operation answers 201
with a fresh id and the request body it received, a read-only one what was
created. GET /_effects answers {"count": N}, how many times the demo really
ran, so "idemlint conform" can be tried end to end.

It logs one line per request to stderr, with the idempotency key. It refuses to
start when the policy has an error finding (exit status 1), and shuts down
gracefully on SIGINT or SIGTERM.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), policy, addr, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&policy, "policy", "", "adapter policy file (required)")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on; port 0 picks a free one")
	_ = cmd.MarkFlagRequired("policy") // cannot fail: the flag exists
	return cmd
}

// serve runs the adapter until ctx ends or a signal arrives. It prints
// "listening on http://ADDR" to stdout once it accepts connections.
func serve(ctx context.Context, policy, addr string, stdout, stderr io.Writer) error {
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	engine, err := reference.Load(policy, reference.WithLogger(logger), reference.WithAccessLog(logger))
	var invalid *reference.InvalidPolicyError
	switch {
	case errors.As(err, &invalid):
		fmt.Fprintf(stderr, "idemlint: refusing to serve: %v\n", err)
		return exitCode(exitFindings)
	case err != nil:
		return err
	}

	// Catch the signals before announcing the address: from then on a
	// supervisor may stop us at any time.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           engine.Middleware(reference.NewDemo(engine.Policy())),
		ReadHeaderTimeout: readHeaderTimeout,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelError),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", shutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	<-served // http.ErrServerClosed
	return nil
}
