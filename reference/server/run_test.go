package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idemlint/idemlint/reference"
)

const policyFile = "../testdata/adapter.json"

func testConfig(policy string) Config {
	return Config{Policy: policy, Addr: "127.0.0.1:0", Store: "memory", ShutdownTimeout: 10 * time.Second,
		ReadTimeout: DefaultReadTimeout, MaxConnections: 8, MaxBodyMemoryMiB: 1}
}

// startRun runs Run on the test config until ctx ends and returns the
// base URL it announced and the channel of its result.
func startRun(t *testing.T, ctx context.Context, stderr io.Writer) (string, <-chan error) {
	t.Helper()
	return startRunConfig(t, ctx, testConfig(policyFile), stderr)
}

// startRunConfig is startRun with c.
func startRunConfig(t *testing.T, ctx context.Context, c Config, stderr io.Writer) (string, <-chan error) {
	t.Helper()
	out, stdout := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, c, stdout, stderr)
		stdout.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no address announced: %v (Run: %v)", err, <-done)
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("Run announced %q", line)
	}
	go io.Copy(io.Discard, out) //nolint:errcheck // nothing more is expected
	return base, done
}

// Run serves until its context ends, then shuts down cleanly.
func TestRunServesUntilTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done := startRun(t, ctx, io.Discard)
	resp, err := http.Get(base + "/_health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /_health: %s", resp.Status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after the context ended = %v, want nil", err)
	}
}

func TestRunRefusesAPolicyTheEngineRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, []byte(`{"spec_version": "idemlint.boundary/v1", "boundary": "adapter"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), testConfig(path), io.Discard, io.Discard)
	if invalid := (*reference.InvalidPolicyError)(nil); !errors.As(err, &invalid) {
		t.Errorf("Run = %v, want *reference.InvalidPolicyError", err)
	}
}

// Settings out of range are refused before anything is opened, naming
// the flags that give them.
func TestRunRefusesSettingsOutOfRange(t *testing.T) {
	const positive = "--max-connections, --max-body-memory, --read-timeout and --shutdown-timeout must be positive, --demo-delay not negative"
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.MaxConnections = 0 }, positive},
		{func(c *Config) { c.MaxBodyMemoryMiB = 0 }, positive},
		{func(c *Config) { c.ReadTimeout = 0 }, positive},
		{func(c *Config) { c.ShutdownTimeout = -time.Second }, positive},
		{func(c *Config) { c.DemoDelay = -time.Second }, positive},
		{func(c *Config) { c.MinBodyRate = -1 }, "--min-body-rate must not be negative"},
	} {
		c := testConfig(policyFile)
		c.Store = "redis://127.0.0.1:1" // never dialled: the settings are refused first
		tc.change(&c)
		if err := Run(context.Background(), c, io.Discard, io.Discard); err == nil || err.Error() != tc.want {
			t.Errorf("Run(%+v) = %v, want %s", c, err, tc.want)
		}
	}
}
