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
		Long: `Conform proves that a live endpoint honours the adapter policy it declares. It
sends the probes CF01-CF19 of the spec ("idemlint probes" lists them,
"idemlint explain CF07" says what one sends and when it passes) and reports
each as PASS, FAIL (with what was expected, what came back, a hint and a
diff of JSON values) or SKIP (with the reason).

--policy is an adapter document, a gateway_to_adapter document embedding the
adapter policy, or a boundary set directory holding one policy (or one that
declares --operation). The policy is probed as written: its lint findings are
printed as notes, the probes it makes inapplicable are skipped, and only a
document that cannot be read as a policy is refused. The probed operation is
--operation, or the policy's first key-required state-changing one; its
request body is the operation's example body ({} when that is not an object),
or --body FILE (a JSON object). Path parameters such as {id} are filled with
the "id" of CF02's answer.

Every fresh probe adds "idemlint_probe_nonce": "<uuidv4>" to the body, so no
two probes ever send one payload (CF06, CF10 and CF11 add the members their
"explain" names). Every request carries the policy's tenant and actor
headers, with the values idemlint-probe-tenant-a and idemlint-probe-actor-a
(CF13's second request: idemlint-probe-tenant-b; CF17's:
idemlint-probe-actor-b). Keys are fresh UUIDv4s.

--target may be given once per replica: duplicates then go to another
replica than their first request, and CF18 checks the replicas share one
record per key.

With --origin ORIGIN, the origin the browser front end is served from
(scheme://host[:port]), CF19 sends the first --target the CORS preflight a
browser sends before the operation; without it, or with --reference, CF19 is
skipped.

With --effects-url URL, an endpoint answering {"count": N} with the number of
real executions ("idemlint serve" has GET /_effects), conform also checks how
much each probe made it grow: by one for a fresh execution, by none for a
replay or a refusal, by exactly one for the whole concurrent burst.

Safety: each target and the effects URL must answer one GET within --timeout
before any probe; every request has a timeout; the number of requests, the
concurrency, the run time and the body size are bounded and printed before the
run; response headers are read up to 64 KiB; redirects are never followed (a
3xx is the answer observed, so no probe reaches another host); no proxy is
used; TLS certificates are verified unless --insecure. Extra headers (--header
"Name: value", or --header-env VAR holding "Name: value") are secrets: at least
8 characters, redacted in all output however the target echoes them. A target
that hangs, resets or answers garbage fails its probes; conform still ends
within its deadline.

--reference runs the same probes against the reference engine configured from
the policy, in process, with no network; the engine refuses a policy with error
findings, as serve does.

Formats: text (default; one line per probe as it ends, within 100 columns,
coloured on a terminal unless NO_COLOR is set), json and junit (one testcase
per probe), written to stdout at the end with the bounds and notes on stderr;
json writes {"error": "..."} when the run cannot start.

Exit status: 0 when every probe passed or was skipped, 1 when one failed, 2
on a usage error, a policy that cannot be read, or a target that does not
answer.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			in.Color = colorEnabled(cmd.OutOrStdout())
			in.SetOptions = lint.SetOptions
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
