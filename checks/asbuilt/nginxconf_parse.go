package asbuilt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/idemlint/idemlint/schemas/fileset"
)

// The NGINX configuration language: directives of words ended by ";" or
// by a block in braces, "#" comments, quotes and backslash escapes, and
// "include" naming files (globs) relative to the including file. Written
// here rather than taken from nginxinc's nginx-go-crossplane: that keeps
// lines but no columns, and follows includes wherever they lead on the
// machine, where idemlint must refuse those leaving the checked tree.

// ngxDirective is one directive, at its first character.
type ngxDirective struct {
	name    string
	args    []string
	at      Pos
	isBlock bool
	block   []*ngxDirective
}

// ngxMaxDepth bounds block nesting, includes included: real
// configurations nest a handful of levels (http, server, location, if).
const ngxMaxDepth = 100

// ngxLimits bound what one configuration's includes may reach: files,
// and directives read in all (a file included twice counts twice, so
// includes that fan out cannot multiply the work unseen).
const (
	ngxMaxIncludeDepth = 32
	ngxMaxDirectives   = 1 << 18
)

// ngxScanner reads the words of an NGINX file with their positions.
type ngxScanner struct {
	file      string
	data      []byte
	i         int
	line, col int
}

// next advances over one byte (a UTF-8 continuation byte takes no column).
func (s *ngxScanner) next() {
	c := s.data[s.i]
	s.i++
	switch {
	case c == '\n':
		s.line, s.col = s.line+1, 1
	case c&0xc0 != 0x80:
		s.col++
	}
}

func (s *ngxScanner) pos() Pos { return Pos{File: s.file, Line: s.line, Column: s.col} }

// ngxToken is a word, or one of the punctuation ";", "{", "}" (punct set).
type ngxToken struct {
	text  string
	at    Pos
	punct bool
}

// token returns the next token; ok false at the end of the file.
func (s *ngxScanner) token() (ngxToken, bool, error) {
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			s.next()
		case c == '#':
			for s.i < len(s.data) && s.data[s.i] != '\n' {
				s.next()
			}
		case c == ';' || c == '{' || c == '}':
			at := s.pos()
			s.next()
			return ngxToken{text: string(c), at: at, punct: true}, true, nil
		case c == '"' || c == '\'':
			at := s.pos()
			s.next()
			var b strings.Builder
			for {
				if s.i >= len(s.data) {
					return ngxToken{}, false, &FileError{At: at, Err: errors.New("not NGINX configuration: a quoted string is not closed")}
				}
				d := s.data[s.i]
				s.next()
				if d == c {
					break
				}
				if d == '\\' && s.i < len(s.data) {
					s.escape(&b)
					continue
				}
				b.WriteByte(d)
			}
			return ngxToken{text: b.String(), at: at}, true, nil
		default:
			at := s.pos()
			var b strings.Builder
			for s.i < len(s.data) {
				d := s.data[s.i]
				if d == ' ' || d == '\t' || d == '\r' || d == '\n' || d == ';' || d == '}' || (d == '{' && !strings.HasSuffix(b.String(), "$")) {
					break
				}
				s.next()
				switch {
				case d == '\\' && s.i < len(s.data):
					s.escape(&b)
					continue
				case d == '{': // "${name}": a variable, not a block
					b.WriteByte(d)
					for s.i < len(s.data) && s.data[s.i] != '}' && s.data[s.i] != '\n' {
						b.WriteByte(s.data[s.i])
						s.next()
					}
					continue
				}
				b.WriteByte(d)
			}
			return ngxToken{text: b.String(), at: at}, true, nil
		}
	}
	return ngxToken{}, false, nil
}

// escape writes the character escaped by the backslash just read, as
// nginx does: \", \' and \\ stand for the character, \t, \r and \n for
// the control character; any other keeps its backslash (a regular
// expression's "\.").
func (s *ngxScanner) escape(b *strings.Builder) {
	c := s.data[s.i]
	s.next()
	switch c {
	case '"', '\'', '\\':
		b.WriteByte(c)
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case 'n':
		b.WriteByte('\n')
	default:
		b.WriteByte('\\')
		b.WriteByte(c)
	}
}

// parseNginx reads one file's directives, not following includes.
func parseNginx(file string, data []byte) ([]*ngxDirective, *FileError) {
	s := &ngxScanner{file: file, data: data, line: 1, col: 1}
	out, _, err := s.block(0, Pos{})
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			return nil, fe
		}
		return nil, &FileError{At: Pos{File: file}, Err: err}
	}
	return out, nil
}

// block reads directives until the "}" closing a block opened at open
// (depth above 0) or the end of the file.
func (s *ngxScanner) block(depth int, open Pos) ([]*ngxDirective, bool, error) {
	var out []*ngxDirective
	var cur *ngxDirective
	for {
		t, ok, err := s.token()
		if err != nil {
			return nil, false, err
		}
		if !ok {
			switch {
			case cur != nil:
				return nil, false, &FileError{At: cur.at, Err: fmt.Errorf("not NGINX configuration: the directive %q is not ended by \";\" or a block", cur.name)}
			case depth > 0:
				return nil, false, &FileError{At: open, Err: errors.New("not NGINX configuration: this block is not closed by \"}\"")}
			}
			return out, true, nil
		}
		switch {
		case !t.punct:
			if cur == nil {
				cur = &ngxDirective{name: t.text, at: t.at}
			} else {
				cur.args = append(cur.args, t.text)
			}
		case t.text == ";" && cur != nil:
			out, cur = append(out, cur), nil
		case t.text == "{" && cur != nil:
			if depth+1 > ngxMaxDepth {
				return nil, false, &FileError{At: t.at, Err: fmt.Errorf("blocks nest more than %d levels; idemlint does not read deeper", ngxMaxDepth)}
			}
			inner, _, err := s.block(depth+1, cur.at)
			if err != nil {
				return nil, false, err
			}
			cur.isBlock, cur.block = true, inner
			out, cur = append(out, cur), nil
		case t.text == "}" && cur == nil && depth > 0:
			return out, true, nil
		default:
			return nil, false, &FileError{At: t.at, Err: fmt.Errorf("not NGINX configuration: unexpected %q", t.text)}
		}
	}
}

// ngxTopWords are directives an NGINX file of a repository starts with:
// a walked *.conf file whose first directive is none of them is another
// program's configuration, skipped.
var ngxTopWords = []string{
	"user", "worker_processes", "worker_rlimit_nofile", "error_log", "pid", "events", "http", "stream",
	"include", "load_module", "daemon", "env", "server", "upstream", "map", "location", "proxy_pass",
	"log_format", "access_log", "geo", "split_clients", "limit_req_zone", "limit_conn_zone",
	"proxy_cache_path", "resolver", "ssl_protocols", "ssl_ciphers", "gzip", "sendfile", "keepalive_timeout",
	"client_max_body_size", "proxy_set_header", "proxy_next_upstream", "add_header", "underscores_in_headers",
	"proxy_read_timeout", "proxy_connect_timeout", "proxy_send_timeout", "proxy_buffers", "proxy_buffer_size",
	"proxy_http_version", "client_body_buffer_size", "server_tokens", "charset", "types", "default_type",
	"ssl_certificate", "ssl_certificate_key", "ssl_session_cache", "real_ip_header", "set_real_ip_from",
	"listen", "server_name", "root", "index", "return", "rewrite", "set", "if", "more_set_headers",
	"ignore_invalid_headers", "proxy_pass_request_headers", "resolver_timeout", "worker_connections",
}

// isNginx reports whether data is NGINX configuration: its first
// directive is one NGINX has, ended by ";" or "{" on its own line (redis
// and logrotate files have an include directive too, without either).
func isNginx(data []byte) bool {
	s := &ngxScanner{data: data, line: 1, col: 1}
	first, ok, err := s.token()
	if err != nil || !ok || first.punct || !slices.Contains(ngxTopWords, first.text) {
		return false
	}
	for {
		t, ok, err := s.token()
		if err != nil || !ok || t.at.Line != first.at.Line {
			return false
		}
		if t.punct {
			return t.text != "}"
		}
	}
}

// includeTree is where an include may lead: below one of roots (absolute,
// links resolved), unless follow.
type includeTree struct {
	roots  []string
	follow bool
}

// treeOf is the tree of the paths named: a directory, or a named file's
// directory (an nginx.conf named alone includes its conf.d).
func treeOf(paths []string, follow bool) includeTree {
	t := includeTree{follow: follow}
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			p = filepath.Dir(p)
		}
		if real, err := realPath(p); err == nil {
			t.roots = append(t.roots, real)
		}
	}
	return t
}

func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

func (t includeTree) holds(real string) bool {
	return t.follow || slices.ContainsFunc(t.roots, func(root string) bool {
		return real == root || strings.HasPrefix(real, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
	})
}

// ngxFile is an NGINX file: its directives, or why it cannot be read.
type ngxFile struct {
	directives []*ngxDirective
	size       int // directives, blocks' included, includes not followed
	err        *FileError
}

// ngxLoader expands the includes of the NGINX files of one Read.
type ngxLoader struct {
	tree  includeTree
	files map[string]*ngxFile // by real path
	globs map[string]ngxResolved
	dirs  map[string]string // real paths of directories, by path
}

// load returns the file at the real path real, read once, its places
// named by path (as the include wrote it).
func (l *ngxLoader) load(real, path string) *ngxFile {
	if f, ok := l.files[real]; ok {
		return f
	}
	f := &ngxFile{}
	data, err := fileset.ReadLimited(real, MaxFileSize, "an infrastructure file")
	if err != nil {
		f.err = &FileError{At: Pos{File: path}, Err: err}
	} else {
		f.directives, f.err = parseNginx(path, data)
		f.size = ngxCount(f.directives)
	}
	l.files[real] = f
	return f
}

// ngxCount counts directives, those of blocks included.
func ngxCount(ds []*ngxDirective) int {
	n := len(ds)
	for _, d := range ds {
		n += ngxCount(d.block)
	}
	return n
}

// ngxExpansion is a file's directives with its includes replaced by what
// they name, the files reached, and what could not be followed.
type ngxExpansion struct {
	directives []*ngxDirective
	reached    map[string]bool // real paths, the file's own excluded
	problems   []Problem
	count      int
}

// expand expands the includes of the file at real (its directives ds).
func (l *ngxLoader) expand(real string, ds []*ngxDirective) *ngxExpansion {
	e := &ngxExpansion{reached: map[string]bool{}}
	e.directives = l.expandAll(e, ds, []string{real}, nil)
	return e
}

// expandAll appends to out the directives ds, includes expanded.
func (l *ngxLoader) expandAll(e *ngxExpansion, ds []*ngxDirective, stack []string, out []*ngxDirective) []*ngxDirective {
	for _, d := range ds {
		if e.count++; e.count > ngxMaxDirectives {
			return out
		}
		switch {
		case d.name == "include" && !d.isBlock:
			out = l.include(e, d, stack, out)
		case d.isBlock:
			c := *d
			c.block = l.expandAll(e, d.block, stack, nil)
			out = append(out, &c)
		default:
			out = append(out, d)
		}
	}
	return out
}

// ngxMatch is a file an include names: its path as the include writes
// it and its real path, or why it is not read (refused).
type ngxMatch struct {
	path, real, refused string
}

// resolve returns the files pattern (absolute, or relative to the
// working directory) names, once per pattern; refused says why none is
// read when the pattern itself is refused or names no file.
func (l *ngxLoader) resolve(pattern string) ([]ngxMatch, string) {
	if r, ok := l.globs[pattern]; ok {
		return r.matches, r.refused
	}
	matches, refused := l.resolveOnce(pattern)
	l.globs[pattern] = ngxResolved{matches, refused}
	return matches, refused
}

type ngxResolved struct {
	matches []ngxMatch
	refused string
}

const outsideTree = "%s is outside the paths checked, not read (like a symbolic link leaving the checked tree); --follow-symlinks follows it"

func (l *ngxLoader) resolveOnce(pattern string) ([]ngxMatch, string) {
	glob := strings.ContainsAny(pattern, "*?[")
	// The directory before the first glob character must be inside the
	// tree before anything is listed: a glob is not walked outside it.
	static := pattern
	if glob {
		static = filepath.Dir(pattern[:strings.IndexAny(pattern, "*?[")] + "x")
	}
	real, err := realPath(static)
	switch {
	case err != nil && glob:
		return nil, "" // a glob matching nothing is no error to nginx
	case err != nil:
		return nil, "no such file; the configuration is read without it"
	case !l.tree.holds(real):
		return nil, fmt.Sprintf(outsideTree, static)
	}
	paths := []string{pattern}
	if glob {
		if paths, err = filepath.Glob(pattern); err != nil {
			return nil, "not a glob: " + err.Error()
		}
	}
	var out []ngxMatch
	for _, p := range paths {
		real, isFile, err := l.realFile(p)
		switch {
		case err != nil: // removed since listed
		case !l.tree.holds(real):
			out = append(out, ngxMatch{path: p, refused: fmt.Sprintf(outsideTree, p)})
		case isFile: // nginx reads files only
			out = append(out, ngxMatch{path: p, real: real})
		}
	}
	return out, ""
}

// realFile returns the real path of p and whether it is a file (not a
// directory), resolving its directory once per directory: a glob lists
// many files of one directory.
func (l *ngxLoader) realFile(p string) (string, bool, error) {
	info, err := os.Lstat(p)
	if err != nil {
		return "", false, err
	}
	if info.Mode()&os.ModeSymlink != 0 {
		real, err := realPath(p)
		if err != nil {
			return "", false, err
		}
		info, err := os.Stat(real)
		return real, err == nil && !info.IsDir(), err
	}
	dir := filepath.Dir(p)
	realDir, ok := l.dirs[dir]
	if !ok {
		if realDir, err = realPath(dir); err != nil {
			return "", false, err
		}
		l.dirs[dir] = realDir
	}
	return filepath.Join(realDir, filepath.Base(p)), !info.IsDir(), nil
}

// include appends to out the directives of the files d names.
func (l *ngxLoader) include(e *ngxExpansion, d *ngxDirective, stack []string, out []*ngxDirective) []*ngxDirective {
	say := func(format string, args ...any) {
		e.problems = append(e.problems, Problem{At: d.at, Message: "include " + strings.Join(d.args, " ") + ": " + fmt.Sprintf(format, args...)})
	}
	if len(d.args) != 1 {
		say("include takes one file name or glob")
		return out
	}
	pattern := d.args[0]
	if !filepath.IsAbs(pattern) {
		pattern = filepath.Join(filepath.Dir(d.at.File), pattern)
	}
	matches, refused := l.resolve(pattern)
	if refused != "" {
		say("%s", refused)
		return out
	}
	if len(matches) > 0 && len(stack) > ngxMaxIncludeDepth {
		say("includes nest more than %d levels; not read", ngxMaxIncludeDepth)
		return out
	}
	for _, m := range matches {
		if m.refused != "" {
			say("%s", m.refused)
			continue
		}
		if slices.Contains(stack, m.real) {
			say("includes %s, which includes this file: an include loop; not read again", m.path)
			continue
		}
		f := l.load(m.real, m.path)
		if f.err != nil {
			if f.err.At.Line == 0 {
				say("%v", f.err.Err)
			} else {
				e.problems = append(e.problems, Problem{At: f.err.At, Message: f.err.Err.Error()})
			}
			continue
		}
		if e.count+f.size > ngxMaxDirectives {
			e.count = ngxMaxDirectives // what follows is not read either
			say("the configuration and its includes hold more than %d directives; the rest is not read", ngxMaxDirectives)
			return out
		}
		e.reached[m.real] = true
		out = l.expandAll(e, f.directives, append(stack, m.real), out)
	}
	return out
}

// readNginx follows the includes of the NGINX files of one Read and
// reads each configuration's resources into its root file: a file that
// another file given includes is read there, once (of two that include
// each other, the first given is the root).
func readNginx(reads []*fileRead, tree func() includeTree) {
	type given struct {
		f    *fileRead
		real string
		e    *ngxExpansion
	}
	if !slices.ContainsFunc(reads, func(f *fileRead) bool { return f != nil && f.isNginx && f.err == nil }) {
		return
	}
	l := &ngxLoader{tree: tree(), files: map[string]*ngxFile{}, globs: map[string]ngxResolved{}, dirs: map[string]string{}}
	var files []given
	for _, f := range reads {
		if f == nil || !f.isNginx || f.err != nil {
			continue
		}
		real, _, err := l.realFile(f.file)
		if err != nil {
			real = f.file // parsed from bytes (Parse): no file on disk
		}
		if _, seen := l.files[real]; seen {
			continue // named twice
		}
		l.files[real] = &ngxFile{directives: f.ngx, size: ngxCount(f.ngx)}
		files = append(files, given{f: f, real: real})
	}
	for i := range files {
		files[i].e = l.expand(files[i].real, files[i].f.ngx)
	}
	for i, g := range files {
		g.f.ngx = nil
		if slices.ContainsFunc(files[:i], func(o given) bool { return o.e.reached[g.real] }) ||
			slices.ContainsFunc(files[i+1:], func(o given) bool { return o.e.reached[g.real] && !g.e.reached[o.real] }) {
			continue // read where it is included
		}
		g.f.problems = append(g.f.problems, g.e.problems...)
		g.f.nginxResources(g.e.directives)
	}
}
