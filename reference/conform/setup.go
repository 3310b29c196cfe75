package conform

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/reference"
	"github.com/idemlint/idemlint/schemas/fileset"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// UsePolicy sets the policy of c from the policy file or boundary set
// directory at path (--policy), as CheckPolicy reads it: against a target
// the policy is probed as written, its lint findings are notes and only a
// document that cannot be read as a policy is refused; inProcess
// (--reference), the reference engine configured from it is the target,
// and it refuses what the engine refuses (docs/probes.md, How a probe
// judges). setOptions is how
// a boundary set directory is read (see PolicyFile).
func (c *Config) UsePolicy(path string, inProcess bool, setOptions SetOptions) error {
	path, err := PolicyFile(path, c.Operation, setOptions)
	if err != nil {
		return err
	}
	src, err := fileset.Read(path)
	if err != nil {
		return fmt.Errorf("--policy %s: %w", path, err)
	}
	if inProcess {
		// The engine checks the policy as it is configured (once), and
		// refuses what it cannot run; its warnings are shown as notes.
		engine, findings, err := reference.NewWithFindings(path, src, reference.WithChecks(c.checks()))
		if err != nil {
			return fmt.Errorf("refusing to probe: %w", err)
		}
		c.Handler, c.Effects = InProcess(engine)
		c.Policy, c.PolicyFindings = engine.Policy(), findings
		return nil
	}
	doc, findings, err := reference.CheckPolicy(path, src, false, c.checks())
	if err != nil {
		return fmt.Errorf("refusing to probe: %w", err)
	}
	c.Policy, c.PolicyFindings = doc.Policy, findings
	return nil
}

// checks are the checks the policy goes through (Config.Checks).
func (c *Config) checks() checks.Options {
	if c.Checks == nil {
		return checks.DefaultOptions()
	}
	return *c.Checks
}

// SetOptions gives the options a boundary set directory is read with: as
// "idemlint check" reads it, its .idemlint.json included. The caller owns
// configuration discovery, so that conform, a probe runner, links no
// configuration or as-built reader.
type SetOptions func(dir string) (checks.Options, error)

// PolicyFile returns the policy document to probe: path itself, or the
// one policy of the set under the directory path (the one declaring
// operation, when given), the set read with setOptions(path) (nil: the
// defaults).
func PolicyFile(path, operation string, setOptions SetOptions) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err // the path is said once
		}
		return "", fmt.Errorf("--policy %s: %w", path, err)
	}
	if !info.IsDir() {
		return path, nil
	}
	opts := checks.DefaultOptions()
	if setOptions != nil {
		if opts, err = setOptions(path); err != nil {
			return "", err
		}
	}
	set, err := checks.Load([]string{path}, opts)
	if err != nil {
		return "", err
	}
	found, err := reference.FindPolicy(set.Documents, operation)
	if err != nil {
		return "", fmt.Errorf("--policy %s: %w", path, err)
	}
	return found, nil
}

// ParseHeaders parses the --header values and the headers held by the
// environment variables named by --header-env.
func ParseHeaders(flags, envs []string) ([]Header, error) {
	var out []Header
	for _, text := range flags {
		h, err := ParseHeader(text, "--header")
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	for _, name := range envs {
		text, ok := os.LookupEnv(name)
		if !ok {
			return nil, fmt.Errorf("--header-env %s: the environment variable is not set", name)
		}
		h, err := ParseHeader(text, "--header-env "+name)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// ReadBody parses the --body file, which must hold one JSON object; nil
// when path is "".
func ReadBody(path string) (*jsontree.Node, error) {
	if path == "" {
		return nil, nil
	}
	src, err := fileset.Read(path)
	if err != nil {
		return nil, fmt.Errorf("--body: %s: %w", path, err)
	}
	root, problems := jsontree.Parse(string(src))
	switch {
	case len(problems) == 0:
		return root, nil
	case root == nil && json.Valid(src):
		return nil, fmt.Errorf("--body: %s holds no JSON object; conform adds its probe fields to an object", path)
	}
	p := problems[0]
	return nil, fmt.Errorf("--body: %s:%d:%d: %s", path, p.Line, p.Column, p.Message)
}
