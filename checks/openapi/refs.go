package openapi

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idemlint/idemlint/schemas/fileset"
)

// maxRefHops bounds a chain of $refs to $refs, so a cycle ends.
const maxRefHops = 32

// resolver follows $refs within a file ("#/components/parameters/Key")
// and to other files under the directory of the description
// ("shared/params.yaml#/Key"). It never uses the network: a $ref to a URL
// is refused, and so is a file outside the directory, so a description
// under review cannot make CI read the runner's files. A $ref that does
// not resolve is an error of that $ref alone: what the reader does then
// depends on what it needed it for.
type resolver struct {
	root     string             // the description's directory, absolute
	rootName string             // the same as the user named it, for messages
	files    map[string]*source // every file read, by absolute path
	bad      map[string]error   // the files that could not be read, and why
	done     map[string]target  // resolved $refs, by file and $ref
}

// target is what a $ref names: the node, where the key naming it is
// written (the position findings use for a shared definition), and its
// JSON Pointer in its file.
type target struct {
	n       node
	at      Location
	pointer string
	err     error
}

func newResolver(root, rootName string, description *source) *resolver {
	return &resolver{root: root, rootName: rootName, files: map[string]*source{description.abs: description}, bad: map[string]error{}, done: map[string]target{}}
}

// follow returns what n names when it is a {"$ref": ...} object, through
// chains of $refs; n itself, at fallback, when it is not a $ref.
func (r *resolver) follow(n node, fallback Location, pointer string) target {
	t := target{n: n, at: fallback, pointer: pointer}
	for hops := 0; ; hops++ {
		ref := t.n.val("$ref").str()
		if ref == "" {
			return t
		}
		if hops == maxRefHops {
			return target{err: fmt.Errorf("$ref %q: more than %d $refs in a row (a cycle?)", ref, maxRefHops)}
		}
		t = r.resolve(t.n.src, ref)
		if t.err != nil {
			return t
		}
	}
}

// resolve resolves ref, written in the file from.
func (r *resolver) resolve(from *source, ref string) target {
	id := from.abs + "\x00" + ref
	if t, ok := r.done[id]; ok {
		return t
	}
	t := r.resolveOnce(from, ref)
	if t.err != nil {
		t.err = fmt.Errorf("$ref %q: %w", ref, t.err)
	}
	r.done[id] = t
	return t
}

func (r *resolver) resolveOnce(from *source, ref string) target {
	u, err := url.Parse(ref)
	if err != nil {
		return target{err: err}
	}
	if u.Host != "" || (u.Scheme != "" && u.Scheme != "file") {
		return target{err: fmt.Errorf("refused: idemlint never fetches over the network; download %s next to the description and refer to the file", u.Redacted())}
	}
	src := from
	if u.Path != "" {
		if src, err = r.file(filepath.Join(filepath.Dir(from.abs), filepath.FromSlash(u.Path))); err != nil {
			return target{err: err}
		}
	}
	n, at := src.root, Location{File: src.name, Line: 1, Column: 1}
	pointer := u.Fragment
	if pointer == "" || pointer == "/" {
		return target{n: n, at: at, pointer: ""}
	}
	if !strings.HasPrefix(pointer, "/") {
		return target{err: fmt.Errorf("the fragment is not a JSON Pointer")}
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if n.isMap() {
			v, k := n.get(tok)
			if !v.ok() {
				return target{err: fmt.Errorf("no %q in %s", tok, src.name)}
			}
			n, at = v, k.at()
			continue
		}
		items := n.items()
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(items) {
			return target{err: fmt.Errorf("no %q in %s", tok, src.name)}
		}
		n, at = items[i], items[i].at()
	}
	return target{n: n, at: at, pointer: pointer}
}

// file reads and parses the file at path, once.
func (r *resolver) file(path string) (*source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if s, ok := r.files[abs]; ok {
		return s, nil
	}
	if err, ok := r.bad[abs]; ok {
		return nil, err
	}
	s, err := r.read(abs)
	if err != nil {
		r.bad[abs] = err
		return nil, err
	}
	r.files[abs] = s
	return s, nil
}

func (r *resolver) read(abs string) (*source, error) {
	if rel, err := filepath.Rel(r.root, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("refused: %s is outside the directory of the description", abs)
	}
	name := abs
	if rel, err := filepath.Rel(r.root, abs); err == nil {
		name = filepath.Join(r.rootName, rel)
	}
	data, err := fileset.ReadLimited(abs, MaxFileSize, "an OpenAPI description")
	if err != nil {
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot read %s: %w", name, err)
	}
	s, err := parseSource(name, data)
	if err != nil {
		return nil, err
	}
	s.abs = abs
	return s, nil
}
