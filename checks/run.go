package checks

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/fileset"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// Options say which rules run, how their findings are shown and which
// files form which set; Limits are what the rules themselves see.
type Options struct {
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
	// Ignore, when set, reports whether a collected file (or an unreadable
	// path) is left out of the set.
	Ignore func(path string) bool
	// Files says which files a walked directory gives and which links
	// are followed.
	Files fileset.Options
	// SetOf, when set, names the boundary set a file belongs to: chains
	// link documents of one set only. "" is the default set.
	SetOf func(path string) string
	// Supplied are the values of the inputs the caller supplies
	// (InputOf.Supply), such as the OpenAPI description of
	// checks/openapi: the rules that require one not supplied do not run.
	Supplied map[Input]any
	// ReadFile, when set, reads a file of the set instead of the disk, so
	// an editor's unsaved buffer or standard input can stand in for it.
	ReadFile func(path string) ([]byte, error)
	// Baseline, when set, is the baseline stage after the rules, the
	// suppressions and the levels: it returns the findings to report
	// (checks/baseline hides those a baseline records).
	Baseline func(findings []Finding) []Finding
	// NewFromRev, when set, keeps the findings a change touched, given
	// the facts of the decoded documents (checks/changed).
	NewFromRev func(findings []Finding, docs []*chain.Facts) []Finding
	// InputFindings are the findings of inputs read outside the set,
	// such as the as-built files that cannot be read and their values not
	// understood (IDL001): they join
	// the run's findings after the baseline and new-from-rev stages,
	// which never hide that an input could not be read.
	InputFindings []Finding
	// Pending are inputs the caller still reads while the run reads the
	// files (an as-built configuration, read on other cores meanwhile):
	// each waits for its input and returns its findings, which join
	// InputFindings. The run calls them once its workers have read the
	// files, before any rule.
	Pending []func() []Finding
	// FailOn is the least severity that fails the run (Result.Verdict);
	// unset, Error.
	FailOn Severity
	// MaxWarnings, when set, fails a run that reports more warnings.
	MaxWarnings *int

	decodeOnly bool // Load: no schema, no rules
	// strings, while the workers read the files of a run, holds one copy
	// of each string their documents repeat (boundary.Strings).
	strings *boundary.Strings
	// names numbers the names of the lists of the run's facts.
	names *chain.NameTable
	// walked, when set, reports whether a file was met while walking a
	// directory rather than named: text in such a file that is not JSON
	// is judged only when it names a boundary marker (spec 6.8).
	walked func(path string) bool
}

// DefaultOptions returns every rule on with the spec's limits.
func DefaultOptions() Options { return Options{Limits: DefaultLimits()} }

// Result is the outcome of checking boundary sets.
type Result struct {
	Findings []Finding // sorted
	// Documents are the boundary documents that decoded, sorted by path,
	// when the run is Load's. Check keeps their Facts only: it releases
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
	// skipped, not checked (spec 6.8): JSON objects with neither
	// spec_version nor boundary, JSON whose top-level value is not an
	// object, and files met in a walked directory that are not JSON and
	// name neither marker.
	NotBoundary int
	// Sets are the Facts by boundary set (Options.SetOf), in the order of
	// the sets' names, which SetNames holds.
	Sets     [][]*chain.Facts
	SetNames []string
	// NotRun are the rules that did not run because an input they
	// require could not be built (no OpenAPI description given), by id.
	NotRun []NotRun
	// Verdict says whether the findings reported fail the run
	// (Options.FailOn, Options.MaxWarnings).
	Verdict Verdict
}

// Load collects the files under paths as Check does and decodes them,
// running no check: what "graph" and "conform" read. Findings holds only
// why files could not be read (IDL001).
func Load(paths []string, opts Options) (*Result, error) {
	opts.decodeOnly = true
	return Check(paths, opts)
}

// Check collects the files under paths and checks them. Its error is a
// usage problem (a named path that does not exist); anything wrong inside
// the set is a finding.
func Check(paths []string, opts Options) (*Result, error) {
	files, skipped, err := fileset.Collect(paths, opts.Files)
	if err != nil {
		return nil, err
	}
	if opts.Ignore != nil {
		files = slices.DeleteFunc(files, opts.Ignore)
		skipped = slices.DeleteFunc(skipped, func(s fileset.Skipped) bool { return opts.Ignore(s.Path) })
	}
	// Collect cleans the files it returns; a named directory is never
	// one of them.
	named := make(map[string]bool, len(paths))
	for _, p := range paths {
		named[filepath.Clean(p)] = true
	}
	opts.walked = func(path string) bool { return !named[path] }
	return checkFiles(files, skipped, opts), nil
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

// CheckFiles checks files: each is read and taken through the
// per-document stages by a pool of GOMAXPROCS workers, then the
// cross-document rules run once per set over its documents.
func CheckFiles(files []string, opts Options) *Result { return checkFiles(files, nil, opts) }

// checkFiles is CheckFiles for a collection in which the skipped paths
// could not be read at all.
func checkFiles(files []string, skipped []fileset.Skipped, opts Options) *Result {
	run := newRun(&opts)
	results := make([]loaded, len(files))
	opts.strings, opts.names = new(boundary.Strings), new(chain.NameTable)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(files), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var w worker
			for {
				i := int(next.Add(1)) - 1
				if i >= len(files) {
					return
				}
				results[i] = w.load(files[i], run)
			}
		}()
	}
	wg.Wait()
	opts.strings = nil // the facts hold the strings, the table is done
	for _, wait := range opts.Pending {
		opts.InputFindings = slices.Concat(opts.InputFindings, wait())
	}

	setOf := func(path string) string {
		if opts.SetOf == nil {
			return ""
		}
		return opts.SetOf(path)
	}
	res := &Result{Files: len(files) + len(skipped), Unreadable: len(skipped)}
	sup := &suppressions{entries: map[string][]*suppression{}}
	sets := map[string][]*chain.Facts{}
	var setNames []string
	// A file that could not be read may be a missing hop of its own set.
	lost := map[string]int{}
	for _, s := range skipped {
		res.Findings = append(res.Findings, unreadable(s.Path, s.Err))
		lost[setOf(s.Path)]++
	}
	for i, r := range results {
		if r.said != nil {
			res.Findings = append(res.Findings, r.said.findings...)
		}
		switch {
		case r.unreadable:
			res.Unreadable++
			lost[setOf(files[i])]++
		case r.notBoundary:
			res.NotBoundary++
		case r.facts != nil:
			if r.doc != nil {
				res.Documents = append(res.Documents, r.doc)
			}
			res.Facts = append(res.Facts, r.facts)
			if r.said != nil {
				sup.add(r.facts.Path, r.said.suppressions)
			}
			name := setOf(r.facts.Path)
			if _, ok := sets[name]; !ok {
				setNames = append(setNames, name)
			}
			sets[name] = append(sets[name], r.facts)
		}
	}
	opts.names.Settle(res.Facts)
	slices.Sort(setNames)
	res.SetNames = setNames
	res.Sets = make([][]*chain.Facts, len(setNames))
	unreadable := make([]int, len(setNames))
	for i, name := range setNames {
		res.Sets[i], unreadable[i] = sets[name], lost[name]
	}
	var overlaps []overlap
	if !opts.decodeOnly {
		var found []Finding
		found, overlaps, res.NotRun = checkSets(run.rules, res.Sets, unreadable, &opts)
		res.Findings = append(res.Findings, found...)
	}
	res.Findings = afterRules(res.Findings, res, sup, overlaps, &opts)
	return res
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
func (w *worker) load(path string, run *run) loaded {
	opts := run.opts
	var src []byte
	var err error
	if opts.ReadFile != nil {
		src, err = opts.ReadFile(path)
	} else {
		src, err = fileset.AppendRead(w.buf[:0], path)
		w.buf = src
	}
	if err != nil {
		return loaded{said: saying([]Finding{unreadable(path, err)}, fileSuppressions{}), unreadable: true}
	}
	doc, findings := checkDocument(path, src, &w.parser, run)
	switch {
	case doc == nil && notBoundaryText(src, opts.walked != nil && opts.walked(path)):
		return loaded{notBoundary: true}
	case doc == nil:
		return loaded{said: saying(findings, fileSuppressions{}), unreadable: true}
	case !doc.Boundary:
		return loaded{notBoundary: true}
	}
	if opts.decodeOnly {
		return loaded{doc: doc, facts: chain.FactsWith(doc, opts.names)}
	}
	var fs fileSuppressions
	fs.entries = readSuppressions(&DocumentPass{Rule: IDL003, Doc: doc, Limits: &opts.Limits, findings: &fs.malformed}, run.rules)
	facts := chain.FactsWith(doc, opts.names)
	if !slices.ContainsFunc(findings, foldsAt) {
		facts.CutPlaces() // the document is dropped: its facts need only their own places
	}
	return loaded{facts: facts, said: saying(findings, fs)}
}

// notBoundaryText reports whether src, which did not parse as a boundary
// JSON object, is no boundary document to judge (spec 6.8): valid JSON
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

// CheckDocument takes src through the per-document stages with every rule
// on and the default limits: the one verdict on a single document, which
// the reference engine asks too. The document is nil when src is not a
// JSON object.
func CheckDocument(path string, src []byte) (*boundary.Document, []Finding) {
	opts := DefaultOptions()
	return checkDocument(path, src, new(jsontree.Parser), newRun(&opts))
}

// run is what every file of one run shares: its options, its rules in
// the order they run, and its schema stage.
type run struct {
	opts   *Options
	rules  Rules       // sorted by id
	schema SchemaStage // nil: the decoder's words
}

func newRun(opts *Options) *run {
	rules := opts.Rules
	if rules == nil {
		rules = Core
	}
	r := &run{opts: opts, rules: rules.Sorted()}
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
		doc = boundary.DecodeShared(path, text, tree, opts.strings)
	}
	var findings []Finding
	for _, pr := range problems {
		findings = append(findings, Finding{Rule: IDL001.ID, Severity: IDL001.Severity, File: path,
			Line: pr.Line, Column: pr.Column, Pointer: pr.Pointer, Message: pr.Message})
	}
	if doc == nil || !doc.Boundary || opts.decodeOnly {
		return doc, findings
	}
	if !opts.Disabled[IDL002.ID] {
		findings = append(findings, schemaFindings(doc, tree, text, run.schema)...)
	}
	// One pass for every rule: a pass per rule was the most frequent
	// allocation of a check.
	pass := &DocumentPass{Doc: doc, Limits: &opts.Limits, findings: &findings}
	for _, r := range run.rules {
		if r.CheckDocument != nil && !opts.Disabled[r.ID] {
			pass.Rule = r
			r.CheckDocument(pass)
		}
	}
	return doc, findings
}

// CheckSet runs the cross-document rules over one set of documents, given
// their facts (chain.FactsOf).
func CheckSet(docs []*chain.Facts, opts *Options) []Finding {
	return CheckSets([][]*chain.Facts{docs}, opts)
}

// CheckSets runs the cross-document rules over sets of documents, given
// their facts, as a check of their files would: each per-set rule over
// each set, then each rule that runs across sets once over all of them.
func CheckSets(sets [][]*chain.Facts, opts *Options) []Finding {
	findings, overlaps, _ := checkSets(newRun(opts).rules, sets, make([]int, len(sets)), opts)
	return linkOverlaps(findings, overlaps)
}

// checkSets is CheckSets with rules for sets in which unreadable[i] files
// of set i did not decode into a document: the chain rules must know that
// a link may be missing. Each input is built once, on the first rule that
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
