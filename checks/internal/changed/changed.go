// Package changed narrows findings to what a change touched: the files that
// differ from a git revision, and the chains that pass through them. It is
// how "idemlint check --new-from-rev REV" reports only what a branch added.
package changed

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/chain"
)

// Set is the files changed since a revision, by resolved absolute path.
type Set map[string]bool

// Since returns the files of the git work tree holding dir that differ from
// rev: committed, staged and unstaged changes (both sides of a rename), and
// untracked files git does not ignore.
func Since(dir, rev string) (Set, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return nil, fmt.Errorf("--new-from-rev: %q is not a revision", rev)
	}
	top, err := git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("--new-from-rev: %s is not in a git work tree: %w", dir, err)
	}
	top = strings.TrimSpace(top)
	if _, err := git(top, "rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
		return nil, fmt.Errorf("--new-from-rev: unknown revision %q", rev)
	}
	diff, err := git(top, "diff", "--name-only", "--no-renames", "-z", rev, "--")
	if err != nil {
		return nil, fmt.Errorf("--new-from-rev: %w", err)
	}
	untracked, err := git(top, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, fmt.Errorf("--new-from-rev: %w", err)
	}
	set := Set{}
	for _, name := range strings.Split(diff+untracked, "\x00") {
		if name != "" {
			set[resolve(filepath.Join(top, filepath.FromSlash(name)))] = true
		}
	}
	return set, nil
}

// git runs git in dir and returns its output; its error carries git's own
// message.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if msg := strings.TrimSpace(stderr.String()); errors.As(err, &exit) && msg != "" {
			return "", errors.New(msg)
		}
		return "", err
	}
	return stdout.String(), nil
}

// Filter keeps the findings located in a changed file, and the
// cross-document findings whose chain passes through one: a change to one
// hop can break a chain at another. docs are the facts of the checked
// set's documents.
func Filter(findings []checks.Finding, docs []*chain.Facts, changed Set) []checks.Finding {
	chainFiles := map[string][]string{}
	for _, c := range chain.Build(docs).Chains {
		for _, h := range c.Hops {
			chainFiles[c.Name()] = append(chainFiles[c.Name()], h.Doc.Path)
		}
		if c.Stop != nil {
			for _, d := range c.Stop.Lacking {
				chainFiles[c.Name()] = append(chainFiles[c.Name()], d.Path)
			}
		}
	}
	resolved := map[string]string{}
	isChanged := func(file string) bool {
		r, ok := resolved[file]
		if !ok {
			r = resolve(file)
			resolved[file] = r
		}
		return changed[r]
	}
	kept := []checks.Finding{}
	for _, f := range findings {
		keep := isChanged(f.File)
		for _, file := range chainFiles[f.Chain] {
			keep = keep || isChanged(file)
		}
		if keep {
			kept = append(kept, f)
		}
	}
	return kept
}

// resolve makes path absolute and free of symbolic links where it can, so
// git's names and the checker's meet whatever the working directory.
func resolve(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return path
}
