// Package baseline records the findings a boundary set has today so that a
// later check reports only new ones: the way to adopt idemlint on an
// existing set without fixing everything first.
//
// A finding is identified by checks.Fingerprint of its rule, file, JSON
// Pointer and chain, as SARIF identifies it, never by line: an entry keeps
// hiding its finding when edits move it, and stops when the value it points
// at moves, is renamed or is fixed. Files are recorded relative to the
// baseline's own directory, so the baseline works from any working
// directory.
package baseline

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/schemas/fileset"
)

// Version is the format version a baseline file declares.
const Version = 1

// Baseline is a set of recorded findings.
type Baseline struct {
	Path    string  // the file, as named
	Entries []Entry // sorted by file, rule, pointer
	dir     string  // absolute directory of Path; entry files are relative to it
}

// Entry is one recorded finding. Only Fingerprint is matched; the other
// fields are there for people reviewing the file.
type Entry struct {
	Fingerprint string `json:"fingerprint"`
	Rule        string `json:"rule"`
	File        string `json:"file"`
	Pointer     string `json:"pointer"`
	Chain       string `json:"chain,omitempty"`
	Message     string `json:"message"`
}

type file struct {
	Version  int     `json:"idemlint_baseline"`
	Findings []Entry `json:"findings"`
}

var fingerprintPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// New returns an empty baseline to be saved at path.
func New(path string) (*Baseline, error) {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	return &Baseline{Path: path, dir: dir}, nil
}

// Load reads the baseline at path. A file that is not a baseline of this
// version is an error naming what is wrong, never an empty baseline.
func Load(path string) (*Baseline, error) {
	src, err := fileset.Read(path)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	b, err := New(path)
	if err != nil {
		return nil, err
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("baseline %s: not a baseline file: %w", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("baseline %s: not a baseline file: data after the JSON object", path)
	}
	if f.Version != Version {
		return nil, fmt.Errorf("baseline %s: \"idemlint_baseline\" is %d, want %d (write it again with --write-baseline)", path, f.Version, Version)
	}
	for i, e := range f.Findings {
		if !fingerprintPattern.MatchString(e.Fingerprint) {
			return nil, fmt.Errorf("baseline %s: finding %d: \"fingerprint\" must be 32 lowercase hex digits, found %q", path, i, e.Fingerprint)
		}
	}
	b.Entries = f.Findings
	return b, nil
}

// Record replaces the entries with findings.
func (b *Baseline) Record(findings []checks.Finding) {
	b.Entries = make([]Entry, 0, len(findings))
	for _, f := range findings {
		file := b.relative(f.File)
		b.Entries = append(b.Entries, Entry{
			Fingerprint: checks.Fingerprint(f.Rule, file, f.Pointer, f.Chain),
			Rule:        f.Rule, File: file, Pointer: f.Pointer, Chain: f.Chain, Message: f.Message,
		})
	}
	slices.SortStableFunc(b.Entries, func(x, y Entry) int {
		return cmp.Or(strings.Compare(x.File, y.File), strings.Compare(x.Rule, y.Rule),
			strings.Compare(x.Pointer, y.Pointer), strings.Compare(x.Chain, y.Chain))
	})
}

// Save writes the baseline to its path, replacing the file only once the
// whole baseline is written.
func (b *Baseline) Save() error {
	data, err := json.MarshalIndent(file{Version: Version, Findings: b.Entries}, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(b.Path), ".idemlint-baseline-*")
	if err != nil {
		return fmt.Errorf("baseline %s: %w", b.Path, err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	// A baseline is committed and shared: readable like any file, not
	// private like a temporary one.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("baseline %s: %w", b.Path, err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("baseline %s: %w", b.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("baseline %s: %w", b.Path, err)
	}
	if err := os.Rename(tmp.Name(), b.Path); err != nil {
		return fmt.Errorf("baseline %s: %w", b.Path, err)
	}
	return nil
}

// Outcome is what filtering by a baseline did.
type Outcome struct {
	New    []checks.Finding // findings the baseline does not hold, in their order
	Hidden int              // findings the baseline holds
	Stale  int              // baseline entries that matched no finding
}

// Filter splits findings into new ones and those the baseline holds. Each
// entry hides one finding, so a second finding of one identity is new.
func (b *Baseline) Filter(findings []checks.Finding) Outcome {
	left := map[string]int{}
	for _, e := range b.Entries {
		left[e.Fingerprint]++
	}
	out := Outcome{New: []checks.Finding{}}
	for _, f := range findings {
		fp := checks.Fingerprint(f.Rule, b.relative(f.File), f.Pointer, f.Chain)
		if left[fp] > 0 {
			left[fp]--
			out.Hidden++
			continue
		}
		out.New = append(out.New, f)
	}
	for _, n := range left {
		out.Stale += n
	}
	return out
}

// relative names file relative to the baseline's directory, with slashes,
// so a baseline means the same from any working directory and any OS.
func (b *Baseline) relative(file string) string {
	if abs, err := filepath.Abs(file); err == nil {
		if rel, err := filepath.Rel(b.dir, abs); err == nil {
			file = rel
		}
	}
	return filepath.ToSlash(file)
}
