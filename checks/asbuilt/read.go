package asbuilt

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"
	"go.yaml.in/yaml/v4/plugin/loaderlimits"

	"github.com/idemlint/idemlint/checks/pathmatch"
	"github.com/idemlint/idemlint/schemas/fileset"
)

// MaxFileSize bounds one infrastructure file. Rendered manifests of a
// whole cluster's routes are far smaller; YAML nodes cost tens of times
// their bytes in memory, so the limit also bounds memory.
const MaxFileSize = 8 << 20

// maxDepth bounds nesting: Kubernetes resources are a few dozen levels
// deep at most (a CRD schema), and the bound keeps a hostile file from
// nesting ten thousand levels.
const maxDepth = 500

// IsFile reports whether a file met while walking a directory is read
// as an infrastructure file (*.yaml, *.yml, *.json; and the endings of a
// platform's own language, *.conf, *.cfg).
func IsFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return textReaderOf(path) != nil
}

// Set is everything read from the infrastructure files.
type Set struct {
	Resources []*Resource // by file as given, then as written
	// Configs are the cluster-wide configurations read: the Istio mesh
	// ConfigMap and the ingress-nginx controller ConfigMap.
	Configs []Text // each named by kind/namespace/name, where it is
	// Skipped counts the documents of kinds idemlint does not read, and
	// SkippedKinds them by kind ("" for a document without one).
	Skipped      int
	SkippedKinds map[string]int
	// Errors are the files that cannot be read or parsed (IDL001 at the
	// file); nothing of them is used.
	Errors []*FileError
	// Problems are values written but not understood, at their place;
	// the rest of their resource is read.
	Problems []Problem

	mesh  *meshConfig
	nginx *nginxConfig
	// envoyGatewayPolicies are the Envoy Gateway policies read, in order.
	envoyGatewayPolicies []*envoyGatewayPolicy
	finish               []func()
	// named are the Resources by kind and name, for as_built entries:
	// an edge may name many, and a set hold thousands.
	named map[Ref][]*Resource
	// byBackend are the Resources with a route to each backend, in
	// Resources order, for implicit bindings: one lookup an edge.
	byBackend map[string][]*Resource
	// differing are the resources whose second, different definition is
	// reported, by name: once each.
	differing map[string]bool
}

// FileError is a file that cannot be read or parsed.
type FileError struct {
	At  Pos // Line 0 when the problem has no place in the file
	Err error
}

func (e *FileError) Error() string {
	if e.At.Line == 0 {
		return e.At.File + ": " + e.Err.Error()
	}
	return e.At.String() + ": " + e.Err.Error()
}

func (e *FileError) Unwrap() error { return e.Err }

// Counts are the summary's: "N as-built resources read, M skipped".
func (s *Set) Counts() (read, skipped int) { return len(s.Resources) + len(s.Configs), s.Skipped }

// Read reads the infrastructure files at paths (files; directories are
// expanded by the caller, keeping the files IsFile takes). A file that
// cannot be read or parsed is an Error and the others are still read.
func Read(paths []string) *Set {
	return readFiles(paths, func() includeTree { return treeOf(paths, false) })
}

// readFiles is Read, an NGINX include reaching only into the tree that
// tree returns (asked only when an NGINX file is read: resolving the links
// of every path named costs time).
func readFiles(paths []string, tree func() includeTree) *Set {
	// Files are parsed in parallel (the YAML parser is most of the cost)
	// and joined in the order given.
	reads := make([]*fileRead, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(paths); i = int(next.Add(1)) - 1 {
				data, err := fileset.ReadLimited(paths[i], MaxFileSize, "an infrastructure file")
				if err != nil {
					reads[i] = &fileRead{err: &FileError{At: Pos{File: paths[i]}, Err: err}}
					continue
				}
				reads[i] = parse(paths[i], data)
			}
		})
	}
	wg.Wait()
	readNginx(reads, tree)
	s := &Set{}
	for _, f := range reads {
		s.add(f)
	}
	s.resolve()
	return s
}

// Parse reads one file's bytes as Read would.
func Parse(path string, data []byte) *Set {
	s := &Set{}
	if len(data) > MaxFileSize {
		s.add(&fileRead{err: &FileError{At: Pos{File: path}, Err: fmt.Errorf("file is larger than the %d MiB limit for an infrastructure file", MaxFileSize>>20)}})
	} else {
		f := parse(path, data)
		readNginx([]*fileRead{f}, func() includeTree { return includeTree{} })
		s.add(f)
	}
	s.resolve()
	return s
}

// fileRead is what one file yields; it joins the set only if the whole
// file parses.
type fileRead struct {
	*reader
	err       *FileError
	set       *Set   // once joined: for the cluster-wide configurations
	data      []byte // the file
	resources []*Resource
	configs   []Text
	skipped   []kindCount // by kind, as met
	finish    []func()
	// meshes and nginxes are the cluster-wide configurations read, in
	// order: the first of the whole set is used.
	meshes  []*meshConfig
	nginxes []*nginxConfig
	// isNginx marks an NGINX file, ngx its directives, includes not
	// followed yet (readNginx).
	isNginx bool
	ngx     []*ngxDirective
	// envoyGatewayPolicies are the Envoy Gateway policies read.
	envoyGatewayPolicies []*envoyGatewayPolicy
}

func parse(path string, data []byte) *fileRead {
	f := &fileRead{reader: newReader(path, len(data)), data: data}
	if t := textReaderOf(path); t != nil {
		if t.is(data) {
			t.read(f, data)
		} else {
			f.skip([]byte("*" + strings.ToLower(filepath.Ext(path)) + " of another program"))
		}
		f.data = nil
		return f
	}
	f.err = f.read(data)
	f.data = nil // the model holds copies; the file is not kept
	return f
}

func (s *Set) add(f *fileRead) {
	if f.err != nil {
		s.Errors = append(s.Errors, f.err)
		return
	}
	f.set = s
	s.Resources = append(s.Resources, f.resources...)
	s.Configs = append(s.Configs, f.configs...)
	for _, k := range f.skipped {
		if s.SkippedKinds == nil {
			s.SkippedKinds = map[string]int{}
		}
		s.SkippedKinds[k.kind] += k.n
		s.Skipped += k.n
	}
	s.Problems = append(s.Problems, f.problems...)
	s.finish = append(s.finish, f.finish...)
	for _, m := range f.meshes {
		s.setMesh(m)
	}
	for _, c := range f.nginxes {
		s.setNginx(c)
	}
	s.envoyGatewayPolicies = append(s.envoyGatewayPolicies, f.envoyGatewayPolicies...)
}

func (f *fileRead) read(data []byte) *FileError {
	utf16 := bytes.HasPrefix(data, []byte{0xfe, 0xff}) || bytes.HasPrefix(data, []byte{0xff, 0xfe})
	if at, bad := invalidUTF8(data); bad && !utf16 {
		// The YAML reader says so too, but without a place.
		line := bytes.Count(data[:at], []byte("\n")) + 1
		start := bytes.LastIndexByte(data[:at], '\n') + 1
		return &FileError{At: Pos{File: f.file, Line: line, Column: utf8.RuneCount(data[start:at]) + 1}, Err: fmt.Errorf("not UTF-8: the byte %#x starts no UTF-8 character (YAML and JSON files are UTF-8, or UTF-16 with a byte order mark)", data[at])}
	}
	if bytes.Contains(data, []byte("{{")) {
		if line, col, ok := templateAction(data); ok {
			return &FileError{At: Pos{File: f.file, Line: line, Column: col}, Err: errTemplate}
		}
	}
	// Each document is parsed on its own, and one of a kind idemlint
	// does not read is skipped unparsed (most of a platform team's
	// manifests are Deployments and Services; check skips unrelated JSON
	// files alike): triage reads the kind of a block-style document,
	// and one it is not sure of is skipped when it names no kind read. Directives (%YAML, %TAG) apply across a document
	// marker, so a file with any is parsed whole, as is one in UTF-16,
	// whose bytes the split does not read (a byte scan rules directives
	// out in most files before the slower search for a line's).
	directives := bytes.IndexByte(data, '%') >= 0 && (bytes.HasPrefix(data, []byte("%")) || bytes.Contains(data, []byte("\n%")))
	if utf16 || directives {
		return f.parseDocuments(data)
	}
	for offset, doc := range documents(data) {
		v, kind := triage(doc)
		switch v {
		case emptyDoc:
			continue
		case skipIt:
			f.skip(kind)
			continue
		}
		if !mayHold(doc) {
			if !blank(doc) {
				f.skip(kind)
			}
			continue
		}
		f.lineOffset = offset
		var loadErr *FileError
		if readSimple(doc, func(node *yaml.Node) { loadErr = f.load(node) }) {
			if loadErr != nil {
				return loadErr
			}
			continue
		}
		if err := f.parseDocuments(doc); err != nil {
			return err
		}
	}
	return nil
}

// parseDocuments parses and reads the YAML documents of data, whose
// first line is the one after f.lineOffset.
func (f *fileRead) parseDocuments(data []byte) *FileError {
	loader, err := yaml.NewLoader(bytes.NewReader(data), yaml.WithPlugin(loaderlimits.New(loaderlimits.DepthValue(maxDepth))))
	if err != nil {
		return f.parseError(err)
	}
	for {
		var doc yaml.Node
		err := loader.Load(&doc)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return f.parseError(err)
		}
		if err := f.load(&doc); err != nil {
			return err
		}
	}
}

// load reads one parsed document, within the file's budget.
func (f *fileRead) load(doc *yaml.Node) *FileError {
	f.document(doc, 0)
	if f.exceeded {
		return &FileError{At: f.pos(doc), Err: errors.New("the YAML aliases of this document expand to more nodes than the file could hold; idemlint does not read alias bombs")}
	}
	return nil
}

// documents splits a YAML stream at its document markers, "---" and
// "...", which YAML forbids at the start of a line inside a document:
// each document with the number of lines before it. A "---" line starts
// its document (it may carry content: "--- |").
func documents(data []byte) iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		start, startLine, line := 0, 0, 0
		for i := 0; i < len(data); {
			end := bytes.IndexByte(data[i:], '\n')
			if end < 0 {
				end = len(data)
			} else {
				end += i + 1
			}
			if i > start && (marker(data[i:end], "---") || marker(data[i:end], "...")) {
				if !yield(startLine, data[start:i]) {
					return
				}
				start, startLine = i, line
			}
			line++
			i = end
		}
		yield(startLine, data[start:])
	}
}

// marker reports whether line starts with the document marker m followed
// by a blank or the end of the line.
func marker(line []byte, m string) bool {
	rest, ok := bytes.CutPrefix(line, []byte(m))
	return ok && (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r')
}

// mayHold reports whether a document triage is not sure of may be one
// idemlint reads: whether it holds the words of one. Only a double-quoted
// escape spells a word without its letters, so a document with a
// backslash may.
func mayHold(doc []byte) bool {
	has := func(w []byte) bool { return bytes.Contains(doc, w) }
	return slices.ContainsFunc(kindWords, has) ||
		(has([]byte("ConfigMap")) && slices.ContainsFunc(configMapWords, has)) ||
		bytes.IndexByte(doc, '\\') >= 0
}

// blank reports whether doc holds no content: markers, comments, blanks.
func blank(doc []byte) bool {
	for line := range bytes.Lines(doc) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' && !bytes.Equal(line, []byte("---")) && !bytes.Equal(line, []byte("...")) {
			return false
		}
	}
	return true
}

// invalidUTF8 returns the offset of the first byte of data that is not
// part of a UTF-8 character.
func invalidUTF8(data []byte) (int, bool) {
	if utf8.Valid(data) {
		return 0, false // the usual case, in a faster loop
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return i, true
		}
		i += size
	}
	return 0, false
}

// parseError is a YAML error at its place, in words a user can act on.
func (f *fileRead) parseError(err error) *FileError {
	var le *yaml.LoadError
	if errors.As(err, &le) {
		msg := le.Message
		if le.ContextMsg != "" {
			msg = le.ContextMsg + ": " + msg
		}
		at := Pos{File: f.file}
		if le.Mark.Line > 0 {
			at.Line, at.Column = le.Mark.Line+f.lineOffset, le.Mark.Column
		}
		return &FileError{At: at, Err: errors.New("not valid YAML or JSON: " + msg)}
	}
	return &FileError{At: Pos{File: f.file}, Err: fmt.Errorf("not valid YAML or JSON: %w", err)}
}

// document reads one YAML document, or one item of a List.
func (f *fileRead) document(doc *yaml.Node, depth int) {
	root := f.visit(doc)
	if root != nil && root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return
		}
		root = f.visit(root.Content[0])
	}
	if root == nil || isNull(root) {
		return // an empty document, between two "---"
	}
	if root.Kind != yaml.MappingNode {
		f.skip(nil)
		return
	}
	apiVersion, _ := f.text(f.field(root, "apiVersion"), "apiVersion")
	kind, _ := f.text(f.field(root, "kind"), "kind")
	group, _, _ := strings.Cut(apiVersion.Value, "/")
	switch {
	case kind.Value == listKind && depth == 0:
		for _, item := range f.items(f.field(root, "items"), "items") {
			f.document(item, depth+1)
		}
	case kind.Value == "ConfigMap" && apiVersion.Value == "v1":
		f.configMap(root)
	case kind.Value == "":
		for _, p := range platforms {
			if p.export != nil && p.export.is(f.reader, root) {
				p.export.read(f, root)
				return
			}
		}
		f.skip(nil)
	default:
		if k := kindReaderOf(kind.Value, group); k != nil {
			k.read(f, root)
			return
		}
		f.skip([]byte(kind.Value))
	}
}

// meta returns a Kubernetes resource's name and namespace: "default"
// when none is written, as Kubernetes reads it, so that a resource is
// compared and named alike with and without it.
func (f *fileRead) meta(root *yaml.Node) (name Text, namespace string) {
	m := f.field(root, "metadata")
	name, _ = f.text(f.field(m, "name"), "metadata.name")
	ns, _ := f.text(f.field(m, "namespace"), "metadata.namespace")
	return name, cmp.Or(ns.Value, defaultNamespace)
}

// defaultNamespace is the namespace of a resource that names none.
const defaultNamespace = "default"

// resource starts a resource read from root.
func (f *fileRead) resource(p Platform, kind string, root *yaml.Node) *Resource {
	name, ns := f.meta(root)
	res := &Resource{Platform: p, Kind: kind, Name: name, Namespace: ns, At: f.pos(f.visit(root)), Traffic: AnyTraffic, fingerprint: fingerprint(root)}
	f.resources = append(f.resources, res)
	return res
}

// config records a cluster-wide configuration read, and returns what
// tells it apart.
func (f *fileRead) config(kind string, root *yaml.Node) configID {
	name, ns := f.meta(root)
	id := configID{at: f.pos(f.visit(root)), name: kind + " " + ns + "/" + name.Value, fingerprint: fingerprint(root)}
	f.configs = append(f.configs, Text{Value: id.name, At: id.at})
	return id
}

// configID is a cluster-wide configuration: where it is, its kind,
// namespace and name, and what it says.
type configID struct {
	at          Pos
	name        string // "ConfigMap istio-system/istio"
	fingerprint uint64
}

// later runs fn once every file is read: what a route does can depend on
// a cluster-wide configuration in another file.
func (f *fileRead) later(fn func()) { f.finish = append(f.finish, fn) }

func (s *Set) resolve() {
	for _, fn := range s.finish {
		fn()
	}
	s.finish = nil
	s.judgeConfigs()
	s.dropCopies()
	s.named = map[Ref][]*Resource{}
	s.byBackend = map[string][]*Resource{}
	for _, res := range s.Resources {
		k := Ref{Kind: res.Kind, Name: res.Name.Value}
		s.named[k] = append(s.named[k], res)
		for _, r := range res.Routes {
			for _, t := range r.Backends {
				// Resources come in order, so one already listed for
				// this backend is the list's last.
				if list := s.byBackend[t.Value]; len(list) == 0 || list[len(list)-1] != res {
					s.byBackend[t.Value] = append(list, res)
				}
			}
		}
	}
	s.Implement(Platforms{Mesh: NoMesh})
}

// dropCopies keeps one resource of each kind, namespace and name, the
// first in path order: a copy that says the same (a chart rendered
// twice, a List beside its items' files) is the same resource, and a
// copy that says otherwise is reported once, at the first that differs,
// since only one of them can be what the cluster holds.
func (s *Set) dropCopies() {
	first := make(map[Ref]*Resource, len(s.Resources))
	kept := s.Resources[:0]
	for _, res := range s.Resources {
		if readsText(res.Platform) {
			// An NGINX or HAProxy file names an upstream in each server
			// that passes to it: resources of one name are alternatives
			// (a file both included and walked is read once already).
			kept = append(kept, res)
			continue
		}
		id := Ref{Kind: res.Kind, Name: res.Name.Value, Namespace: res.Namespace}
		was, ok := first[id]
		if !ok {
			first[id] = res
			kept = append(kept, res)
			continue
		}
		if name := resourceName(res); was.fingerprint != res.fingerprint && !s.differing[name] {
			s.differ(name, was.At, res.At)
		}
	}
	clear(s.Resources[len(kept):])
	s.Resources = kept
	// The configurations' copies were told apart as they were added.
	seen := map[string]bool{}
	s.Configs = slices.DeleteFunc(s.Configs, func(c Text) bool {
		dup := seen[c.Value]
		seen[c.Value] = true
		return dup
	})
}

// configMap reads the ConfigMaps a platform claims (the Istio mesh
// configuration, the ingress-nginx controller's): the first to claim
// one, in the platforms' order.
func (f *fileRead) configMap(root *yaml.Node) {
	name, _ := f.meta(root)
	label, _ := f.text(f.path(root, "metadata", "labels", "app.kubernetes.io/name"), "the app.kubernetes.io/name label")
	for _, p := range platforms {
		if c := p.configMap; c != nil && c.claims(f, root, name.Value, label.Value) {
			c.read(f, root)
			return
		}
	}
	f.skip([]byte("ConfigMap"))
}

// kindCount is how many documents of a kind a file skipped.
type kindCount struct {
	kind string
	n    int
}

// skip counts a document skipped, by kind (nil when it has none). A file
// holds a few kinds: a list is cheaper than a map, and a kind met again
// costs no string.
func (f *fileRead) skip(kind []byte) {
	for i := range f.skipped {
		if f.skipped[i].kind == string(kind) {
			f.skipped[i].n++
			return
		}
	}
	f.skipped = append(f.skipped, kindCount{string(kind), 1})
}

// judgeConfigs reports the values of the cluster-wide configurations
// that are not understood even when no route they apply to was read
// (a hop no resource binds takes the mesh's retry too); FileFindings
// reports a place once however many routes judged it.
func (s *Set) judgeConfigs() {
	if m := s.mesh; m != nil && m.retry != nil {
		_, problems := envoyRetry(m.retry.attempts, m.retry.retryOn, m.retry.perTry, m.at.at)
		s.Problems = append(s.Problems, problems...)
	}
	if c := s.nginx; c != nil {
		_, problems := nginxRetry(s.controller("proxy-next-upstream", nginxProxyNextUpstream, c.at.at),
			s.controller("proxy-next-upstream-tries", nginxProxyNextUpstreamTries, c.at.at),
			s.controller("retry-non-idempotent", nginxRetryNonIdempotent, c.at.at), false)
		s.Problems = append(s.Problems, problems...)
	}
}

// once reports a second cluster-wide configuration of one kind: the
// first read is used. A copy of the first (same name) is the same
// configuration: read once, and reported once if it differs.
func (s *Set) once(kind string, first, second configID) {
	if first.name != second.name {
		s.Problems = append(s.Problems, Problem{At: second.at, Message: fmt.Sprintf("a second %s; the one at %s is used", kind, first.at)})
		return
	}
	if first.fingerprint != second.fingerprint && !s.differing[first.name] {
		s.differ(first.name, first.at, second.at)
	}
}

// differ reports a second definition of the resource name that differs
// from the first, at first, and remembers it is reported.
func (s *Set) differ(name string, first, second Pos) {
	if s.differing == nil {
		s.differing = map[string]bool{}
	}
	s.differing[name] = true
	s.Problems = append(s.Problems, Problem{At: second, Used: &first, Message: fmt.Sprintf("two definitions of %s, which differ: the first is used; keep one", name)})
}

// The readers' shared value types.

// matcher builds a matcher of t; a regular expression that does not
// compile is a problem, and a matcher that matches nothing (the platform
// refuses such a route, so it carries no request).
func (f *fileRead) matcher(kind pathmatch.Kind, t Text, what string) *pathmatch.Matcher {
	m, err := pathmatch.New(kind, t.Value)
	if err != nil {
		f.problems = append(f.problems, Problem{At: t.At, Message: what + ": " + err.Error()})
		return &pathmatch.Matcher{Kind: kind, Value: t.Value}
	}
	return &m
}

// timed is a duration read, where it was written.
type timed struct {
	d  time.Duration
	At Pos
}

// duration reads a duration ("1.5s", "250ms", "1h2m").
func (f *fileRead) duration(n *yaml.Node, what string) (timed, bool) {
	t, ok := f.text(n, what)
	if !ok {
		return timed{}, false
	}
	d, err := time.ParseDuration(t.Value)
	if err != nil {
		f.problems = append(f.problems, Problem{At: t.At, Message: what + " is " + `"` + t.Value + `", not a duration`})
		return timed{}, false
	}
	return timed{d, t.At}, true
}

// corsList reads a CORS configuration whose allowed headers are a list
// and whose credentials are a boolean (Istio corsPolicy, the Gateway API
// CORS filter).
func (f *fileRead) corsList(n *yaml.Node, headers, credentials string) *CORS {
	c := &CORS{At: f.pos(n)}
	c.AllowHeadersFrom = Origin{At: c.At}
	if h := f.field(n, headers); h != nil {
		c.AllowHeaders = f.texts(h, headers)
		c.AllowHeadersFrom = Origin{At: f.pos(f.visit(h))}
	}
	if v, at, ok := f.boolean(f.field(n, credentials), credentials); ok {
		c.Credentials, c.CredentialsFrom = v, Origin{At: at}
	}
	return c
}

// partial returns the first key of the match m that is none of known
// (a header or query condition), or "".
func (f *fileRead) partial(m *yaml.Node, known ...string) string {
	keys, _ := f.pairs(m, "match")
	for _, k := range keys {
		if !slices.Contains(known, k.Value) {
			return k.Value
		}
	}
	return ""
}
