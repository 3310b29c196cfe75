// Package starter builds and writes the starter boundary set of "idemlint
// init": the reference flow the tests hold to zero findings, or one such
// flow per tag of an OpenAPI description, each document naming its kind's
// JSON Schema, which the set carries for editors that validate offline.
package starter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/schemas"
)

// SchemaDir holds the schemas the starter documents name in "$schema";
// a dot-directory, so "check" does not take them for documents.
const SchemaDir = ".schemas"

// Set is a starter set, its files by slash-separated path.
type Set struct {
	Files fstest.MapFS
	// Skipped names the operations of the description that no boundary
	// document can carry (a method other than GET, HEAD, OPTIONS, POST,
	// PUT, PATCH and DELETE).
	Skipped []string
	// KeyHeader is the key header of a set built from a description: the
	// one given, else the one the description declares (openapi.KeyHeader).
	KeyHeader string
	// KeyGaps names the operations "openapi check" will report for want
	// of the key header in the description (openapi.KeyGaps).
	KeyGaps []string
	// Notes are the description's notes and init's: the key header it
	// assumed, the operations KeyGaps names.
	Notes []openapi.Note
}

// New returns the starter set: the base flow, or one flow per tag of api
// when it is not nil, with keyHeader as its key header ("" for the one
// the description declares).
func New(api *openapi.API, keyHeader string) (*Set, error) {
	base, err := fixtures.Lookup(fixtures.Base)
	if err != nil {
		return nil, err
	}
	set := &Set{Files: fstest.MapFS{}}
	if api == nil {
		err = fs.WalkDir(base.Files, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(base.Files, p)
			set.Files[p] = &fstest.MapFile{Data: data, Mode: 0o644}
			return err
		})
	} else {
		err = set.fromOpenAPI(api, base.Files, keyHeader)
	}
	if err != nil {
		return nil, err
	}
	return set, set.withSchemas()
}

// fromOpenAPI fills the set with one copy of the base flow per tag of api.
func (s *Set) fromOpenAPI(api *openapi.API, base fs.FS, keyHeader string) error {
	names, err := fs.Glob(base, "*.json")
	if err != nil {
		return err
	}
	template := map[string][]byte{}
	for _, name := range names {
		if template[name], err = fs.ReadFile(base, name); err != nil {
			return err
		}
	}
	if keyHeader != "" && !openapi.IsHeaderName(keyHeader) {
		return fmt.Errorf("--key-header %q is not a header name", keyHeader)
	}
	s.Notes = slices.Clone(api.Notes)
	s.KeyHeader = keyHeader
	if s.KeyHeader == "" {
		var declared bool
		if s.KeyHeader, declared = openapi.KeyHeader(api); !declared && api.BodyKey == "" {
			s.Notes = append(s.Notes, openapi.Note{Kind: openapi.NoteNoKey, Instance: api.Path})
		}
	}
	docs, skipped, err := openapi.Starter(api, template, s.KeyHeader)
	if err != nil {
		return err
	}
	s.Skipped, s.KeyGaps = skipped, openapi.KeyGaps(api, s.KeyHeader)
	for _, op := range s.KeyGaps {
		s.Notes = append(s.Notes, openapi.Note{Kind: openapi.NoteKeyGap, Instance: op})
	}
	for _, d := range docs {
		s.Files[d.Path] = &fstest.MapFile{Data: d.Data, Mode: 0o644}
	}
	return nil
}

// withSchemas adds a first member "$schema" to each document, naming its
// kind's schema, and the self-contained schemas of the kinds under
// SchemaDir, so editors complete and validate the documents offline.
func (s *Set) withSchemas() error {
	for p, f := range s.Files {
		if path.Ext(p) != ".json" {
			continue
		}
		data, err := withSchema(p, f.Data)
		if err != nil {
			return err
		}
		f.Data = data
	}
	for _, kind := range schemas.Kinds() {
		src, _ := schemas.SelfContained(kind)
		s.Files[path.Join(SchemaDir, schemas.FileName(kind))] = &fstest.MapFile{Data: src, Mode: 0o644}
	}
	return nil
}

// withSchema inserts "$schema" into the document at p (slash-separated,
// relative to the set's directory). The path starts with "./" or "../",
// which makes editors (VS Code) resolve it against the document's
// directory.
func withSchema(p string, data []byte) ([]byte, error) {
	var doc struct {
		Boundary string `json:"boundary"`
	}
	open := bytes.IndexByte(data, '{')
	if err := json.Unmarshal(data, &doc); err != nil || open < 0 || doc.Boundary == "" {
		return nil, fmt.Errorf("starter document %s is not a boundary document", p)
	}
	up := "./"
	if depth := strings.Count(p, "/"); depth > 0 {
		up = strings.Repeat("../", depth)
	}
	member := fmt.Sprintf("\n  \"$schema\": \"%s%s/%s\",", up, SchemaDir, schemas.FileName(doc.Boundary))
	return slices.Concat(data[:open+1], []byte(member), data[open+1:]), nil
}

// Write writes the set into dir (created if needed) and returns the files
// it created, directory by directory as fs.WalkDir lists them. It never overwrites: if any of them exists,
// it writes nothing and names them.
func (s *Set) Write(dir string) ([]string, error) {
	var files, existing []string
	err := fs.WalkDir(s.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			target := filepath.Join(dir, filepath.FromSlash(p))
			files = append(files, target)
			if _, err := os.Lstat(target); err == nil {
				existing = append(existing, target)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(existing) > 0 {
		return nil, fmt.Errorf("refusing to overwrite %s; nothing written", strings.Join(existing, ", "))
	}
	// Materialize refuses to overwrite too, in case a file was created
	// since the check.
	if err := (fixtures.Case{Files: s.Files}).Materialize(dir); err != nil {
		return nil, err
	}
	return files, nil
}

// Options are what "idemlint init" is told besides its directory.
type Options struct {
	// Spec is the OpenAPI description to build the set from
	// (--from-openapi); "" for the base flow.
	Spec string
	// KeyHeader is the key header (--key-header); "" for the one the
	// description declares.
	KeyHeader string
	// Verbose lists every note, not one line per kind (--verbose).
	Verbose bool
}

// Init writes the starter set into dir ("idemlint init DIR"): the base
// flow, or one flow per tag of the OpenAPI description opts.Spec names.
// It says on stderr which operations of the description it skipped, and
// on stdout the files it created, its notes (what the description left
// unreadable, the key header it assumed, the operations "openapi check"
// will report until the description declares their key header), one line
// per kind unless opts.Verbose, and what to run next.
func Init(dir string, opts Options, stdout, stderr io.Writer) error {
	var api *openapi.API
	if opts.Spec != "" {
		var err error
		if api, err = openapi.Load(opts.Spec); err != nil {
			return err
		}
	}
	set, err := New(api, opts.KeyHeader)
	if err != nil {
		return err
	}
	for _, s := range set.Skipped {
		fmt.Fprintf(stderr, "idemlint: skipped %s: boundary documents carry GET, HEAD, OPTIONS, POST, PUT, PATCH and DELETE\n", s)
	}
	files, err := set.Write(dir)
	if err != nil {
		return err
	}
	for _, target := range files {
		fmt.Fprintf(stdout, "created %s\n", target)
	}
	openapi.WriteNotes(stdout, set.Notes, opts.Verbose)
	if api != nil {
		fmt.Fprintf(stdout, "next: adapt each flow's components and policy, then run: idemlint openapi check --spec %s %s\n", api.Path, dir)
		return nil
	}
	fmt.Fprintf(stdout, "next: rename the components and operations, then run: idemlint check %s\n", dir)
	return nil
}
