package conform

import (
	"context"
	"errors"
	"io"
)

// Invocation is a conform run as the command line gives it: the policy
// file or set to read, the targets or the reference engine, the files and
// environment variables that hold the body and the secret headers, and
// the output format. Config holds the settings that need no reading.
type Invocation struct {
	Config
	// PolicyPath is the policy file or boundary set directory (--policy);
	// SetOptions reads a set (see PolicyFile).
	PolicyPath string
	SetOptions SetOptions
	// Reference probes the reference engine configured from the policy,
	// in process, instead of Targets (--reference).
	Reference bool
	// BodyFile holds the request body (--body; see ReadBody).
	BodyFile string
	// HeaderFlags and HeaderEnvs are --header and --header-env (see
	// ParseHeaders).
	HeaderFlags, HeaderEnvs []string
	// Format is one of Formats; Color colours the text format.
	Format string
	Color  bool
	// LogRequests logs every request and its answer on stderr
	// (--verbose; see Config.Verbose).
	LogRequests bool
}

// Execute runs in: the report goes to stdout in its format, the bounds and
// notes to stderr. Its error is a usage error or a run that could not
// start; with the json format it is also written to stdout as
// {"error": "..."}, so a script reading stdout gets a JSON object
// whatever happens.
func (in Invocation) Execute(ctx context.Context, stdout, stderr io.Writer) (*Report, error) {
	rep, err := in.execute(ctx, stdout, stderr)
	if err != nil && in.Format == "json" {
		_ = WriteJSONError(stdout, err) // the caller says it on stderr too
	}
	return rep, err
}

func (in Invocation) execute(ctx context.Context, stdout, stderr io.Writer) (*Report, error) {
	switch {
	case in.PolicyPath == "":
		return nil, errors.New("give the policy to probe with --policy FILE|DIR")
	case len(in.Targets) == 0 && !in.Reference:
		return nil, errors.New("give the service to probe with --target URL, or --reference")
	case len(in.Targets) > 0 && in.Reference:
		return nil, errors.New("--target and --reference exclude each other: --reference probes the engine in process")
	case in.Reference && (in.EffectsURL != "" || in.Insecure):
		return nil, errors.New("--effects-url and --insecure concern a --target; --reference counts executions itself")
	}
	out, err := NewWriter(in.Format, stdout, stderr, in.Color)
	if err != nil {
		return nil, err
	}
	cfg := in.Config
	if cfg.Headers, err = ParseHeaders(in.HeaderFlags, in.HeaderEnvs); err != nil {
		return nil, err
	}
	if cfg.Body, err = ReadBody(in.BodyFile); err != nil {
		return nil, err
	}
	if err := cfg.UsePolicy(in.PolicyPath, in.Reference, in.SetOptions); err != nil {
		return nil, err
	}
	if in.LogRequests {
		cfg.Verbose = stderr
	}
	runner, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return runner.Run(ctx, out)
}
