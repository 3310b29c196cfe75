package checks

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/fileset"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// Options are what the user set for a run: which rules run, at which
// levels and limits, the stages that narrow their findings, the verdict's
// threshold and the inputs supplied; and where the files come from
// (Files). What the run keeps while it runs is its own (run).
type Options struct {
	// Limits are what the rules themselves see.
	Limits Limits
	// Rules are the rules the run applies; nil, Core. The caller composes
	// them from the lists of the packages that hold rules (checks/lint
	// does for idemlint).
	Rules Rules
	// Schema, when set, makes the JSON Schema stage of a run (each run
	// its own, whose caches live as long as the run): it words what the
	// decoder found nonconforming (IDL002). The core compiles no JSON
	// Schema library, so a program that wants the validator's words
	// (idemlint, through checks/lint) sets it.
	Schema func() SchemaStage
	// Disabled rules are not run and their findings are dropped ("off" in
	// the project configuration, which refuses to disable IDL001).
	Disabled map[string]bool
	// Severity replaces the severity of every finding of a rule.
	Severity map[string]Severity
	// Baseline, when set, hides the findings a baseline records
	// (checks/internal/baseline); NewFromRev, when set, keeps those a change
	// touched (checks/internal/changed). Where they run among the stages that
	// follow the rules is the stage list's (pipeline.go).
	Baseline, NewFromRev Stage
	// FailOn is the least severity that fails the run (Result.Verdict);
	// unset, Error.
	FailOn Severity
	// MaxWarnings, when set, fails a run that reports more warnings.
	MaxWarnings *int
	// Inputs are the values of the inputs the caller supplies
	// (InputOf.Supply), such as the OpenAPI description of
	// checks/openapi: the rules that require one not supplied do not run.
	Inputs []Supplied
	// Files say where the files come from.
	Files Files
}

// Files say which files form which boundary set, and how they are read.
type Files struct {
	// Options say which files a walked directory gives and which links
	// are followed.
	fileset.Options
	// Ignore, when set, reports whether a collected file (or an unreadable
	// path) is left out of the set.
	Ignore func(path string) bool
	// SetOf, when set, names the boundary set a file belongs to: chains
	// link documents of one set only. "" is the default set.
	SetOf func(path string) string
	// ReadFile, when set, reads a file of the set instead of the disk, so
	// an editor's unsaved buffer or standard input can stand in for it.
	ReadFile func(path string) ([]byte, error)
}

// InputRead is what an input read beside a run (Options.Pending) says:
// its findings, and how many of its files could not be read.
type InputRead struct {
	Findings   []Finding
	Unreadable int
}

// DefaultOptions returns every rule on with the default limits.
func DefaultOptions() Options { return Options{Limits: DefaultLimits()} }

// Result is the outcome of checking boundary sets.
type Result struct {
	Findings []Finding // sorted
	// Documents are the boundary documents that decoded, sorted by path,
	// when the run is Load's. CheckPaths keeps their Facts only: it releases
	// each document once the document's own stages are done, so that a
	// set of tens of thousands does not stay live until the end.
	Documents []*boundary.Document
	// Facts are what the cross-document stage reads of each boundary
	// document that decoded, sorted by path.
	Facts []*chain.Facts
	Files int // files examined
	// Unreadable counts the files that could not be read or parsed:
	// their IDL001 findings say why.
	Unreadable int
	// NotBoundary counts the files that are not boundary documents,
	// skipped, not checked (docs/check.md, Which files are checked): JSON objects with neither
	// spec_version nor boundary, JSON whose top-level value is not an
	// object, and files met in a walked directory that are not JSON and
	// name neither marker.
	NotBoundary int
	// Sets are the Facts by boundary set (Files.SetOf), in the order of
	// the sets' names, which SetNames holds.
	Sets     [][]*chain.Facts
	SetNames []string
	// NotRun are the rules that did not run because an input they
	// require could not be built (no OpenAPI description given), by id.
	NotRun []NotRun
	// Verdict says whether the findings reported fail the run
	// (Options.FailOn, Options.MaxWarnings).
	Verdict Verdict

	stages []Stage // the run's, for Finish
}

// Load collects the files under paths as CheckPaths does and decodes them,
// running no check: what "graph" and "conform" read. Findings holds only
// why files could not be read (IDL001).
func Load(paths []string, opts Options) (*Result, error) {
	run := newRun(&opts)
	run.decodeOnly = true
	return run.checkPaths(paths)
}

// CheckPaths collects the files under paths and checks them: the rules
// Options lists, then the stages after them (pipeline.go). lint.Run sets
// Options up from what a user of idemlint asked and calls it. Its error is a
// usage problem (a named path that does not exist); anything wrong inside
// the set is a finding.
func CheckPaths(paths []string, opts Options) (*Result, error) {
	return newRun(&opts).checkPaths(paths)
}

// checkPaths collects the files under paths and checks them, reading
// each file as the walk meets it.
func (r *run) checkPaths(paths []string) (*Result, error) {
	// Collect cleans the files it returns; a named directory is never
	// one of them.
	named := make(map[string]bool, len(paths))
	for _, p := range paths {
		named[filepath.Clean(p)] = true
	}
	r.walked = func(path string) bool { return !named[path] }
	var skipped []fileset.Skipped
	var err error
	files := r.loadEach(func(load func(path string)) {
		_, skipped, err = fileset.CollectEach(paths, r.opts.Files.Options, func(path string) {
			if !r.ignored(path) {
				load(path)
			}
		})
	})
	if err != nil {
		return nil, err
	}
	// The walk meets the files in its own order; a run's are sorted.
	slices.SortFunc(files, func(a, b loadedFile) int { return strings.Compare(a.path, b.path) })
	skipped = slices.DeleteFunc(skipped, func(s fileset.Skipped) bool { return r.ignored(s.Path) })
	return r.checkFiles(files, skipped), nil
}

// ignored reports whether a collected path is left out of the set: the
// configuration ignores it, or it is the file of a supplied input (an
// OpenAPI description among the documents), no boundary document.
func (r *run) ignored(path string) bool {
	if r.opts.Files.Ignore != nil && r.opts.Files.Ignore(path) {
		return true
	}
	return slices.ContainsFunc(r.opts.Inputs, func(s Supplied) bool {
		f, ok := s.value.(FileInput)
		return ok && f.Is(path)
	})
}

// loaded is one file after the per-document stages. A run holds one for
// every file until the cross-document stage, and most files have nothing
// to say: what they do say is behind one pointer.
type loaded struct {
	doc         *boundary.Document // Load's only
	facts       *chain.Facts       // nil when the file is no boundary document
	said        *said              // nil when the file has no finding and no suppression
	unreadable  bool
	notBoundary bool
}

// said is what a file says beside its facts.
type said struct {
	findings     []Finding
	suppressions fileSuppressions
}

// saying returns the said of findings and fs, nil when both are empty.
func saying(findings []Finding, fs fileSuppressions) *said {
	if len(findings) == 0 && len(fs.entries) == 0 && len(fs.malformed) == 0 {
		return nil
	}
	return &said{findings: findings, suppressions: fs}
}

// loadedFile is a file of a run and what it kept.
type loadedFile struct {
	path string
	loaded
}

// CheckFiles checks files: each is read and taken through the
// per-document stages by a pool of GOMAXPROCS workers, then the
// cross-document rules run once per set over its documents.
func CheckFiles(files []string, opts Options) *Result {
	r := newRun(&opts)
	return r.checkFiles(r.loadEach(func(load func(path string)) {
		for _, f := range files {
			load(f)
		}
	}), nil)
}

// checkFiles checks the files loaded, in which the skipped paths could
// not be read at all.
func (r *run) checkFiles(files []loadedFile, skipped []fileset.Skipped) *Result {
	r.waitForInputs()
	res, lost := r.tally(files, skipped)
	unreadable := r.groupSets(res, lost)
	if !r.decodeOnly {
		var found []Finding
		found, r.overlaps, res.NotRun = checkSets(r.rules, res.Sets, unreadable, r.opts)
		res.Findings = append(res.Findings, found...)
	}
	r.afterRules(res)
	return res
}

// loadEach takes every file that feed gives to its load through the
// per-document stages on a pool of GOMAXPROCS workers, and returns what
// each kept, in the order given. The workers start on the first file
// while feed goes on, one fewer than there are cores: feed walking a
// directory keeps a core busy, and more threads than cores would switch
// between them at a cost in every file's decoding. The last starts once
// feed is done.
func (r *run) loadEach(feed func(load func(path string))) []loadedFile {
	r.strings, r.names = new(boundary.Strings), new(chain.NameTable)
	type done struct {
		i int
		loadedFile
	}
	var q fileQueue
	q.more.L = &q.mu
	kept := make([][]done, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	start := func(k int) {
		wg.Go(func() {
			var w worker
			for {
				i, path, ok := q.take()
				if !ok {
					return
				}
				kept[k] = append(kept[k], done{i, loadedFile{path, w.load(path, r)}})
			}
		})
	}
	for k := range len(kept) - 1 {
		start(k)
	}
	feed(q.put)
	q.close()
	start(len(kept) - 1)
	wg.Wait()
	r.strings = nil // the facts hold the strings, the table is done
	files := make([]loadedFile, len(q.paths))
	for _, ds := range kept {
		for _, d := range ds {
			files[d.i] = d.loadedFile
		}
	}
	return files
}

// fileQueue hands the files a walk meets to the workers, in order. The
// walk never waits for them: a bounded channel would hold it up, and its
// core would idle, whenever the workers fell behind.
type fileQueue struct {
	mu     sync.Mutex
	more   sync.Cond // on mu: a file was put, or the queue closed
	paths  []string
	next   int // the index of the next file to take
	closed bool
}

// put adds the file at path.
func (q *fileQueue) put(path string) {
	q.mu.Lock()
	q.paths = append(q.paths, path)
	q.mu.Unlock()
	q.more.Signal()
}

// close says no file will be put any more.
func (q *fileQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.more.Broadcast()
}

// take returns the next file and its index, waiting for one to be put;
// false once the queue is closed and every file taken.
func (q *fileQueue) take() (int, string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.next == len(q.paths) && !q.closed {
		q.more.Wait()
	}
	if q.next == len(q.paths) {
		return 0, "", false
	}
	q.next++
	return q.next - 1, q.paths[q.next-1], true
}

// waitForInputs waits for the supplied inputs still being read while the
// workers read the files, and keeps their own findings for the stage that
// adds them.
func (r *run) waitForInputs() {
	for _, in := range r.opts.Inputs {
		if p, ok := in.value.(PendingInput); ok {
			found, unreadable := p.Findings()
			r.inputFindings = append(r.inputFindings, found...)
			r.inputUnreadable += unreadable
		}
	}
}

// tally gathers what the files said into the run's result: their
// findings and suppressions, the facts of the boundary documents and the
// counts of the others; and, by set name, how many files of each set could
// not be read, since each may be a missing hop of its own set.
func (r *run) tally(files []loadedFile, skipped []fileset.Skipped) (*Result, map[string]int) {
	res := &Result{Files: len(files) + len(skipped), Unreadable: len(skipped) + r.inputUnreadable}
	lost := map[string]int{}
	for _, s := range skipped {
		res.Findings = append(res.Findings, unreadable(s.Path, s.Err))
		lost[r.setOf(s.Path)]++
	}
	for _, l := range files {
		if l.said != nil {
			res.Findings = append(res.Findings, l.said.findings...)
		}
		switch {
		case l.unreadable:
			res.Unreadable++
			lost[r.setOf(l.path)]++
		case l.notBoundary:
			res.NotBoundary++
		case l.facts != nil:
			if l.doc != nil {
				res.Documents = append(res.Documents, l.doc)
			}
			res.Facts = append(res.Facts, l.facts)
			if l.said != nil {
				r.suppressions.add(l.facts.Path, l.said.suppressions)
			}
		}
	}
	r.names.Settle(res.Facts)
	return res, lost
}

// groupSets groups the facts of res by boundary set, in the order of the
// sets' names (Result.Sets, Result.SetNames), and returns how many files of
// each set could not be read, given them by set name (lost).
func (r *run) groupSets(res *Result, lost map[string]int) (unreadable []int) {
	sets := map[string][]*chain.Facts{}
	for _, f := range res.Facts {
		name := r.setOf(f.Path)
		if _, ok := sets[name]; !ok {
			res.SetNames = append(res.SetNames, name)
		}
		sets[name] = append(sets[name], f)
	}
	slices.Sort(res.SetNames)
	res.Sets = make([][]*chain.Facts, len(res.SetNames))
	unreadable = make([]int, len(res.SetNames))
	for i, name := range res.SetNames {
		res.Sets[i], unreadable[i] = sets[name], lost[name]
	}
	return unreadable
}

// setOf names the boundary set of the file at path (Files.SetOf); "" is
// the default set.
func (r *run) setOf(path string) string {
	if r.opts.Files.SetOf == nil {
		return ""
	}
	return r.opts.Files.SetOf(path)
}

// A worker takes files through the per-document stages one after another,
// reusing one read buffer and one parse tree: both live only while a file
// goes through its stages (the model copies every string it keeps).
type worker struct {
	buf    []byte
	parser jsontree.Parser
}

// load reads one file and takes it through the per-document stages:
// parse and decode (IDL001), the schema (IDL002), the per-document rules
// and its suppressions. What it keeps of a boundary document is its facts
// (and, for Load, the document).
func (w *worker) load(path string, r *run) loaded {
	opts := r.opts
	var src []byte
	var err error
	if opts.Files.ReadFile != nil {
		src, err = opts.Files.ReadFile(path)
	} else {
		src, err = fileset.AppendRead(w.buf[:0], path)
		w.buf = src
	}
	if err != nil {
		return loaded{said: saying([]Finding{unreadable(path, err)}, fileSuppressions{}), unreadable: true}
	}
	doc, findings := checkDocument(path, src, &w.parser, r)
	switch {
	case doc == nil && notBoundaryText(src, r.walked != nil && r.walked(path)):
		return loaded{notBoundary: true}
	case doc == nil:
		return loaded{said: saying(findings, fileSuppressions{}), unreadable: true}
	case !doc.Boundary:
		return loaded{notBoundary: true}
	}
	if r.decodeOnly {
		return loaded{doc: doc, facts: chain.FactsWith(doc, r.names)}
	}
	var fs fileSuppressions
	fs.entries = readSuppressions(&DocumentPass{Rule: idl003, Doc: doc, Limits: &opts.Limits, findings: &fs.malformed}, r.rules)
	facts := chain.FactsWith(doc, r.names)
	if !slices.ContainsFunc(findings, foldsAt) {
		facts.CutPlaces() // the document is dropped: its facts need only their own places
	}
	return loaded{facts: facts, said: saying(findings, fs)}
}

// notBoundaryText reports whether src, which did not parse as a boundary
// JSON object, is no boundary document to judge: valid JSON
// whose top-level value is not an object, or, in a file met while walking
// a directory, text naming neither marker (a tsconfig.json with comments,
// JSON5, an editor's settings). A broken boundary document always names
// one, and a file named on the command line is always judged.
func notBoundaryText(src []byte, walked bool) bool {
	if json.Valid(src) && bytes.TrimLeft(src, " \t\r\n")[0] != '{' {
		return true
	}
	return walked && !bytes.Contains(src, []byte(`"spec_version"`)) && !bytes.Contains(src, []byte(`"boundary"`))
}

// CheckDocument takes src through the per-document stages with every core
// rule on and the default limits: the one verdict on a single document,
// which the reference engine asks too. The document is nil when src is
// not a JSON object.
func CheckDocument(path string, src []byte) (*boundary.Document, []Finding) {
	return CheckDocumentWith(path, src, DefaultOptions())
}

// CheckDocumentWith is CheckDocument with the rules, levels of the rules
// turned off, limits and schema stage of opts.
func CheckDocumentWith(path string, src []byte, opts Options) (*boundary.Document, []Finding) {
	return checkDocument(path, src, new(jsontree.Parser), newRun(&opts))
}

// run is the private state of one run: what its files share while the
// workers read them, and what the stages after the rules need of it.
type run struct {
	opts   *Options
	rules  Rules       // sorted by id
	schema SchemaStage // nil: the decoder's words

	decodeOnly bool // Load: no schema, no rules
	// strings, while the workers read the files of a run, holds one copy
	// of each string their documents repeat (boundary.Strings).
	strings *boundary.Strings
	// names numbers the names of the lists of the run's facts.
	names *chain.NameTable
	// walked, when set, reports whether a file was met while walking a
	// directory rather than named: text in such a file that is not JSON
	// is judged only when it names a boundary marker (docs/check.md, Which
	// files are checked).
	walked func(path string) bool

	// suppressions are the documents', overlaps the findings that share a
	// cause as the rules recorded them, and inputFindings the supplied
	// inputs' own (PendingInput): what the stages after the rules read.
	suppressions  *suppressions
	overlaps      []overlap
	inputFindings []Finding
	// inputUnreadable counts the supplied inputs' files that could not be
	// read: unreadable in every output format, as the set's are.
	inputUnreadable int
}

func newRun(opts *Options) *run {
	rules := opts.Rules
	if rules == nil {
		rules = Core
	}
	r := &run{opts: opts, rules: rules.Sorted(), suppressions: &suppressions{entries: map[string][]*suppression{}}}
	if opts.Schema != nil {
		r.schema = opts.Schema()
	}
	return r
}

// checkDocument parses src with parser and takes it through the
// per-document stages.
func checkDocument(path string, src []byte, parser *jsontree.Parser, run *run) (*boundary.Document, []Finding) {
	opts := run.opts
	// No copy: nothing built from text keeps it (the model copies every
	// string it keeps, the schema cache keeps digests), so a caller may
	// reuse src once this returns; the workers do.
	text := unsafe.String(unsafe.SliceData(src), len(src))
	tree, problems := parser.Parse(text)
	var doc *boundary.Document
	if tree != nil {
		doc = boundary.DecodeShared(path, text, tree, run.strings)
	}
	var findings []Finding
	for _, pr := range problems {
		findings = append(findings, Finding{Rule: IDL001.ID, Severity: IDL001.Severity, File: path,
			Line: pr.Line, Column: pr.Column, Pointer: pr.Pointer, Message: pr.Message})
	}
	if doc == nil || !doc.Boundary || run.decodeOnly {
		return doc, findings
	}
	if !opts.Disabled[idl002.ID] {
		findings = append(findings, schemaFindings(doc, tree, text, run.schema)...)
	}
	// One pass serves every rule of the document, so a check allocates
	// one per document, not one per rule.
	pass := &DocumentPass{Doc: doc, Limits: &opts.Limits, findings: &findings}
	for _, r := range run.rules {
		if r.CheckDocument != nil && !opts.Disabled[r.ID] {
			pass.Rule = r
			r.CheckDocument(pass)
		}
	}
	return doc, findings
}

// checkSets runs the cross-document rules over sets of documents, given
// their facts, in which unreadable[i] files of set i did not decode into a
// document (the chain rules must know that a link may be missing): each
// per-set rule over each set, then each rule that runs across sets once
// over all of them. Each input is built once, on the first rule that
// requires it; a rule whose input cannot be built does not run and is
// returned as not run. The overlaps the rules recorded are for the
// related-location stage, once the findings are final.
func checkSets(rules []*Rule, sets [][]*chain.Facts, unreadable []int, opts *Options) ([]Finding, []overlap, []NotRun) {
	var findings []Finding
	var overlaps []overlap
	run := newInputRun(sets, unreadable, opts)
	notRun := map[string]string{}
	pass := func(r *Rule, set int, docs []*chain.Facts) {
		inputs := make(map[Input]any, len(r.Requires))
		for _, in := range r.Requires {
			v, err := run.value(in, set)
			if err != nil {
				if _, ok := notRun[r.ID]; !ok {
					notRun[r.ID] = err.Error()
				}
				return
			}
			inputs[in] = v
		}
		r.CheckSet(&SetPass{Rule: r, Docs: docs, Limits: &opts.Limits, inputs: inputs, findings: &findings, overlaps: &overlaps})
	}
	for i, set := range sets {
		for _, r := range rules {
			if r.CheckSet != nil && !r.AcrossSets && !opts.Disabled[r.ID] {
				pass(r, i, set)
			}
		}
	}
	for _, r := range rules {
		if r.AcrossSets && !opts.Disabled[r.ID] {
			pass(r, -1, run.all)
		}
	}
	var out []NotRun
	for _, r := range rules {
		if why, ok := notRun[r.ID]; ok {
			out = append(out, NotRun{Rule: r.ID, Reason: why})
		}
	}
	return findings, overlaps, out
}

func unreadable(path string, err error) Finding {
	return Finding{Rule: IDL001.ID, Severity: IDL001.Severity, File: path, Message: "cannot read file: " + err.Error()}
}
