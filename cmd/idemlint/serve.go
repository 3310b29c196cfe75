package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/reference/server"
)

func newServeCmd() *cobra.Command {
	var o server.Config
	cmd := &cobra.Command{
		Use:   "serve --policy FILE [--addr HOST:PORT] [--store memory|redis://...|postgres://...]",
		Short: "Run the reference engine as a local adapter in front of a demo handler",
		Long:  longHelp("serve"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The policy goes through the checks "idemlint check" runs.
			checks := lint.DefaultOptions()
			o.Checks = &checks
			// A refused policy or setting is a usage error (exit 2).
			err := server.Run(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if errors.Is(err, server.ErrUnfinished) {
				return exitCode(exitFindings)
			}
			return err
		},
	}
	serveFlags(cmd, &o)
	_ = cmd.MarkFlagRequired("policy") // cannot fail: the flag exists
	return cmd
}

// serveFlags defines serve's flags on cmd, each setting its field of o,
// with server.DefaultConfig's values as defaults.
func serveFlags(cmd *cobra.Command, o *server.Config) {
	d, f := server.DefaultConfig(), cmd.Flags()
	f.StringVar(&o.Policy, "policy", "", "adapter policy file (required)")
	f.StringVar(&o.Addr, "addr", d.Addr, "address to listen on; port 0 picks a free one")
	f.StringVar(&o.Store, "store", d.Store, "where records live: memory, redis://HOST:PORT[/DB], rediss://..., unix:///PATH/redis.sock[?db=N], or postgres://USER@HOST/DB")
	f.DurationVar(&o.DemoDelay, "demo-delay", d.DemoDelay, "how long the demo takes for a state-changing operation, e.g. 2s")
	f.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", d.ShutdownTimeout, "how long requests in flight may finish after SIGINT or SIGTERM")
	f.IntVar(&o.MaxConnections, "max-connections", d.MaxConnections, "most client connections open at once; when all are taken, the longest idle one is closed for a new client, else one stalled before its first request, else the client waits")
	f.Int64Var(&o.MaxBodyMemoryMiB, "max-body-memory", d.MaxBodyMemoryMiB, "MiB of request bodies held at once; beyond it a request waits a second, then gets 503")
	f.DurationVar(&o.ReadTimeout, "read-timeout", d.ReadTimeout, "how long a client may take to send a request, body included")
	f.Int64Var(&o.MinBodyRate, "min-body-rate", d.MinBodyRate, "bytes a second a request body must arrive at, after its first 2 seconds; a slower one is cut (0: no minimum)")
}
