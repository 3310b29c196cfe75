// Package config finds, reads and validates the project configuration file,
// .idemlint.json, and merges it with the command line into checks.Options.
// Precedence: flags over the file over the defaults.
//
// The file is validated against schemas/config.schema.json (unknown keys are
// errors: a misspelt setting must not be ignored silently), then against
// what only the run knows: the ids of its rules.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/asbuilt"
	"github.com/idemlint/idemlint/schemas"
	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/fileset"
	"github.com/idemlint/idemlint/schemas/jsontree"
	"github.com/idemlint/idemlint/schemas/suggest"
)

// FileName is the name of the configuration file.
const FileName = ".idemlint.json"

// Config is a validated configuration file.
type Config struct {
	Path string // the file, as found or named

	// Disabled and Severity are the "rules" levels: "off", or a severity.
	Disabled map[string]bool
	Severity map[string]checks.Severity
	// MaxRetryAmplification is 0 when the file does not set it.
	MaxRetryAmplification int
	// MinTTL holds only the tiers the file names.
	MinTTL map[string]time.Duration
	// AsBuilt is the "as_built" section, its paths joined to the file's
	// directory; nil when the file has none.
	AsBuilt *asbuilt.Source

	// The glob patterns, split into segments; they are relative to dir,
	// the absolute directory of Path.
	dir     string
	ignore  [][]string
	include [][]string // nil: defaultInclude
	sets    [][]string
}

// defaultInclude is "include" when the file does not set it: ["**/*.json"].
var defaultInclude = [][]string{{"**", "*.json"}}

// Find returns the configuration file that applies to start: FileName in
// start (its directory when start is a file) or in the nearest directory
// above it; "" when there is none up to the root of the file system. The
// path is relative to the working directory when start is, so messages
// name it as the user would.
func Find(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	shown := func(p string) string { return p }
	if !filepath.IsAbs(start) {
		if wd, err := os.Getwd(); err == nil {
			shown = func(p string) string {
				if rel, err := filepath.Rel(wd, p); err == nil {
					return rel
				}
				return p
			}
		}
	}
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		dir = filepath.Dir(dir)
	}
	for {
		p := filepath.Join(dir, FileName)
		if _, err := os.Stat(p); err == nil {
			return shown(p), nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: %w", shown(p), err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// Discover returns the configuration of a run, found the one way every
// command and the language server find it (through checks/lint): the
// file explicit names
// (--config) when set, else the file Find finds from start (the first
// checked path, or the workspace); nil with none (--no-config) or when
// there is no file. Its "rules" name rules of rules, the run's.
func Discover(explicit string, none bool, start string, rules checks.Rules) (*Config, error) {
	switch {
	case none:
		return nil, nil
	case explicit != "":
		return Load(explicit, rules)
	}
	path, err := Find(start)
	if err != nil || path == "" {
		return nil, err
	}
	return Load(path, rules)
}

// Load reads and validates the configuration file at path. Every problem
// is reported, one per line, as "path:line:column: message"; its "rules"
// name rules of rules.
func Load(path string, rules checks.Rules) (*Config, error) {
	src, err := fileset.Read(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return Parse(path, src, rules)
}

// Parse validates src, the content of the configuration file at path,
// whose "rules" name rules of rules.
func Parse(path string, src []byte, rules checks.Rules) (*Config, error) {
	text := string(src)
	root, problems := jsontree.Parse(text)
	pos := jsontree.NewPosition(text)
	var errs configErrors
	report := func(n *jsontree.Node, format string, args ...any) {
		line, col := pos.At(n.Offset)
		errs = append(errs, configError{path, line, col, fmt.Sprintf(format, args...)})
	}
	for _, p := range problems {
		errs = append(errs, configError{path, p.Line, p.Column, p.Message})
	}
	if root == nil || len(errs) > 0 {
		return nil, errs.join()
	}
	for _, v := range schemas.ValidateConfig(root.Any()) {
		report(root.Nearest(v.Pointer), "%s", v.Message)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	c := &Config{Path: path, Disabled: map[string]bool{}, Severity: map[string]checks.Severity{}, MinTTL: map[string]time.Duration{}, dir: dir}
	// Rule ids are keys, checked whatever the shape of the rest, so one run
	// names every misspelt id too.
	if levels := root.Get("rules"); levels != nil {
		for _, m := range levels.Members {
			c.readRule(rules, m, report)
		}
	}
	if len(errs) > 0 {
		// The typed reading below assumes the shape the schema promises.
		return nil, errs.join()
	}
	if n := root.Get("max_retry_amplification"); n != nil {
		if v, ok := n.Int(); ok && v <= math.MaxInt32 {
			c.MaxRetryAmplification = int(v)
		} else {
			report(n, `"max_retry_amplification" must be at most %d, found %s`, math.MaxInt32, n.Text)
		}
	}
	if tiers := root.Get("min_ttl"); tiers != nil {
		for _, m := range tiers.Members {
			d, err := boundary.ParseTTL(m.Value.Text)
			if err != nil {
				report(m.Value, "%q: %v", m.Key, err)
				continue
			}
			c.MinTTL[m.Key] = d
		}
	}
	if n := root.Get("as_built"); n != nil {
		c.AsBuilt = c.readAsBuilt(n, pos, report)
	}
	c.ignore = readPatterns(root, "ignore", report)
	c.include = readPatterns(root, "include", report)
	c.sets = readPatterns(root, "sets", report)
	if len(errs) > 0 {
		return nil, errs.join()
	}
	return c, nil
}

// readAsBuilt reads the "as_built" section, whose shape the schema has
// checked: the paths relative to the file's directory, and where the
// mesh is declared, at which a mesh default is reported
// (docs/as-built.md, Defaults are configuration).
func (c *Config) readAsBuilt(n *jsontree.Node, pos *jsontree.Position, report func(*jsontree.Node, string, ...any)) *asbuilt.Source {
	src := &asbuilt.Source{Mesh: asbuilt.NoMesh}
	if paths := n.Get("paths"); paths != nil {
		for _, p := range paths.Items {
			path := filepath.FromSlash(p.Text)
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Dir(c.Path), path)
			}
			src.Paths = append(src.Paths, path)
		}
	}
	if m := n.Get("mesh"); m != nil {
		src.Mesh = asbuilt.Mesh(m.Text)
		line, col := pos.At(m.Offset)
		src.MeshAt = asbuilt.Pos{File: c.Path, Line: line, Column: col}
	}
	if classes := n.Get("classes"); classes != nil {
		src.Classes = map[string]asbuilt.ImplementationName{}
		for _, m := range classes.Members {
			name, err := asbuilt.ParseImplementation(m.Value.Text)
			if err != nil {
				hint := ""
				if near := suggest.One(m.Value.Text, asbuilt.ImplementationNames()); near != "" {
					hint = fmt.Sprintf("; did you mean %q?", near)
				}
				report(m.Value, "as_built.classes %q: %v%s", m.Key, err, hint)
				continue
			}
			src.Classes[m.Key] = name
		}
	}
	return src
}

// configError is one problem of a configuration file, at its position.
type configError struct {
	path         string
	line, column int
	message      string
}

type configErrors []configError

// join is every problem, one a line in the order of the file: they are
// found by several passes (syntax, schema, rule ids, values).
func (errs configErrors) join() error {
	slices.SortStableFunc(errs, func(a, b configError) int {
		return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.column, b.column))
	})
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = fmt.Errorf("%s:%d:%d: %s", e.path, e.line, e.column, e.message)
	}
	return errors.Join(out...)
}

// readRule reads one member of "rules": the id of one of rules and its
// level.
func (c *Config) readRule(rules checks.Rules, m jsontree.Member, report func(*jsontree.Node, string, ...any)) {
	r, known := rules.Lookup(m.Key)
	if !known || r.ID != m.Key {
		report(m.Value, `unknown rule %q in "rules"; %s`, m.Key, rules.Hint(m.Key))
		return
	}
	if m.Value.Kind != jsontree.String {
		return // the schema reported it
	}
	level := m.Value.Text
	if level == "off" {
		if r.ID == checks.IDL001.ID {
			report(m.Value, "IDL001 cannot be turned off: a file that is not strict JSON cannot be checked at all")
			return
		}
		c.Disabled[r.ID] = true
		return
	}
	sev, err := checks.ParseSeverity(level)
	if err != nil {
		return // the schema reported it
	}
	if r.ID == checks.IDL001.ID && sev != checks.Error {
		report(m.Value, "IDL001 is always an error: a file that is not strict JSON cannot be checked at all")
		return
	}
	c.Severity[r.ID] = sev
}

// readPatterns reads the glob patterns of the field named key, reporting
// those that are not valid.
func readPatterns(root *jsontree.Node, key string, report func(*jsontree.Node, string, ...any)) [][]string {
	field := root.Get(key)
	if field == nil {
		return nil
	}
	var patterns [][]string
	for _, n := range field.Items {
		segs, err := splitPattern(n.Text)
		if err != nil {
			report(n, "%s pattern %q: %v", key, n.Text, err)
			continue
		}
		patterns = append(patterns, segs)
	}
	return patterns
}

// splitPattern splits a glob pattern into segments, refusing what could
// never match a relative path and what path.Match cannot compile.
func splitPattern(p string) ([]string, error) {
	if strings.HasPrefix(p, "/") {
		return nil, errors.New(`patterns are relative to the directory of ` + FileName + `; remove the leading "/"`)
	}
	segs := strings.Split(strings.TrimSuffix(p, "/"), "/")
	for _, s := range segs {
		switch s {
		case "", ".", "..":
			return nil, fmt.Errorf("segment %q never matches: write a path below the directory of %s without empty, \".\" or \"..\" segments", s, FileName)
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("segment %q: %v", s, err)
		}
	}
	return segs, nil
}

// Ignored reports whether file (as collected, relative to the working
// directory or absolute) matches an ignore pattern, or lies in a directory
// that does. Files outside the configuration's directory never match.
func (c *Config) Ignored(file string) bool {
	segs, ok := c.segments(file)
	return ok && covers(c.ignore, segs)
}

// Place says where file (as collected, relative to the working directory or
// absolute) stands: the boundary set it belongs to, and whether "include"
// and "ignore" keep it in the check. A set is named by its directory,
// slash-separated and relative to the configuration's directory: the
// deepest directory above file that a "sets" pattern matches; "" is the
// default set of the files in none. A file outside the configuration's
// directory is in the default set and kept when its name ends in ".json",
// as without a configuration; so is every file when c is nil.
func (c *Config) Place(file string) (set string, keep bool) {
	segs, ok := c.segments(file)
	if !ok {
		return "", strings.HasSuffix(file, ".json")
	}
	include := c.include
	if include == nil {
		include = defaultInclude
	}
	keep = covers(include, segs) && !covers(c.ignore, segs)
	for n := len(segs) - 1; n >= 1; n-- {
		for _, pat := range c.sets {
			if match(pat, segs[:n]) {
				return strings.Join(segs[:n], "/"), keep
			}
		}
	}
	return "", keep
}

// segments splits file into the segments of its path relative to the
// configuration's directory; false when c is nil or file is outside.
func (c *Config) segments(file string) ([]string, bool) {
	if c == nil {
		return nil, false
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, false
	}
	rel, err := filepath.Rel(c.dir, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, false
	}
	return strings.Split(filepath.ToSlash(rel), "/"), true
}

// covers reports whether a pattern matches the path segs or a directory
// above it.
func covers(patterns [][]string, segs []string) bool {
	for _, pat := range patterns {
		for n := 1; n <= len(segs); n++ {
			if match(pat, segs[:n]) {
				return true
			}
		}
	}
	return false
}

// match reports whether the path segments name match the pattern segments
// pat, where a "**" segment matches any number of segments.
func match(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for skip := 0; skip <= len(name); skip++ {
				if match(pat[1:], name[skip:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// Flags are the command-line settings that take precedence over the file;
// a nil field was not given.
type Flags struct {
	MaxRetryAmplification *int
	FollowSymlinks        bool
	// AsBuilt are the --as-built paths; Mesh the --mesh, "" when not given.
	AsBuilt []string
	Mesh    string
}

// AsBuilt returns where the run's as-built configuration is: the paths
// and the mesh of the flags, each over the file's (c may be nil); false
// when neither names a path or a mesh, and the as-built rules do not run.
func AsBuilt(c *Config, flags Flags) (asbuilt.Source, bool, error) {
	src := asbuilt.Source{Mesh: asbuilt.NoMesh, FollowSymlinks: flags.FollowSymlinks}
	given := false
	if c != nil && c.AsBuilt != nil {
		src.Paths, src.Mesh, src.MeshAt, src.Classes = c.AsBuilt.Paths, c.AsBuilt.Mesh, c.AsBuilt.MeshAt, c.AsBuilt.Classes
		given = true
	}
	if len(flags.AsBuilt) > 0 {
		src.Paths, given = flags.AsBuilt, true
	}
	if flags.Mesh != "" {
		m, err := asbuilt.ParseMesh(flags.Mesh)
		if err != nil {
			return src, false, fmt.Errorf("--mesh: %w", err)
		}
		src.Mesh, src.MeshAt, given = m, asbuilt.Pos{}, true
	}
	return src, given, nil
}

// Options merges the defaults, the configuration file c (nil when there is
// none) and the flags, each overriding the one before.
func Options(c *Config, flags Flags) checks.Options {
	opts := checks.DefaultOptions()
	if c != nil {
		if c.MaxRetryAmplification > 0 {
			opts.Limits.MaxRetryAmplification = c.MaxRetryAmplification
		}
		for tier, d := range c.MinTTL {
			opts.Limits.MinTTL[tier] = d
		}
		opts.Disabled = c.Disabled
		opts.Severity = c.Severity
		if len(c.ignore) > 0 {
			opts.Files.Ignore = c.Ignored
		}
		opts.Files.Roots = []string{c.dir}
		opts.Files.Include = func(path string) bool {
			_, keep := c.Place(path)
			return keep
		}
		opts.Files.SetOf = func(path string) string {
			set, _ := c.Place(path)
			return set
		}
	}
	if flags.MaxRetryAmplification != nil {
		opts.Limits.MaxRetryAmplification = *flags.MaxRetryAmplification
	}
	opts.Files.FollowSymlinks = flags.FollowSymlinks
	return opts
}

// NoteIgnored says on w which of the paths named on the command line the
// configuration's "ignore" leaves out (nothing when c is nil): without a
// word, a named file that is not checked looks like a clean one, or like
// no boundary document at all.
func (c *Config) NoteIgnored(w io.Writer, paths []string) {
	if c == nil {
		return
	}
	for _, p := range paths {
		if c.Ignored(p) {
			fmt.Fprintf(w, "idemlint: %s is ignored by %s (\"ignore\"), so it is not checked; --no-config checks it\n", p, c.Path)
		}
	}
}
