package main

import (
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/reference/conform"
)

func newConformCmd() *cobra.Command {
	var in conform.Invocation
	cmd := &cobra.Command{
		Use:   "conform --policy FILE|DIR (--target URL | --reference)",
		Short: "Probe a running service, or the reference engine, against its idempotency policy",
		Long:  longHelp("conform"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			in.Color = colorEnabled(cmd.OutOrStdout())
			in.SetOptions = lint.SetOptions
			// The policy goes through the checks "idemlint check" runs.
			checks := lint.DefaultOptions()
			in.Checks = &checks
			rep, err := in.Execute(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if rep.Count(conform.Fail) > 0 {
				return exitCode(exitFindings)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&in.PolicyPath, "policy", "", "adapter policy file, or a boundary set directory (required)")
	fl.StringArrayVar(&in.Targets, "target", nil, "base URL of the service to probe, http or https (repeatable: replicas behind no balancer)")
	fl.BoolVar(&in.Reference, "reference", false, "probe the reference engine configured from the policy, in process, instead of --target")
	fl.StringVar(&in.Operation, "operation", "", "operation_key of the state-changing operation to probe (default: the first key-required one)")
	fl.StringVar(&in.BodyFile, "body", "", "JSON object file to use as the request body instead of the operation's example body")
	fl.StringVar(&in.EffectsURL, "effects-url", "", `URL answering {"count": N}, the number of real executions, to check that each probe executed exactly as often as it should`)
	fl.StringVar(&in.Origin, "origin", "", "origin of the browser front end, scheme://host[:port]: CF19 preflights the first --target from it")
	fl.StringArrayVar(&in.HeaderFlags, "header", nil, `extra request header "Name: value" (repeatable; the value, at least 8 characters, is redacted in all output)`)
	fl.StringArrayVar(&in.HeaderEnvs, "header-env", nil, `environment variable holding an extra header "Name: value" (repeatable)`)
	fl.IntVar(&in.Concurrency, "concurrency", conform.DefaultConcurrency, "simultaneous duplicates of CF07 and CF18, and the most connections to one host (2-256)")
	fl.DurationVar(&in.Timeout, "timeout", conform.DefaultTimeout, "timeout of one request (one that may wait on an attempt in flight gets at least the policy's wait_timeout_ms + 2s)")
	fl.DurationVar(&in.MaxDuration, "max-duration", conform.DefaultMaxDuration, "deadline of the whole run")
	fl.BoolVar(&in.Insecure, "insecure", false, "do not verify the target's TLS certificate")
	fl.BoolVarP(&in.LogRequests, "verbose", "v", false, "log every request (method, path, headers, body) and its answer to stderr")
	fl.StringVarP(&in.Format, "format", "f", "text", "output format: "+joinNames(conform.Formats))
	completeFlag(cmd, "format", conform.Formats...)
	_ = cmd.MarkFlagFilename("policy", "json")
	_ = cmd.MarkFlagFilename("body", "json")
	return cmd
}
