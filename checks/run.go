package checks

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/idemlint/idemlint/checks/boundary"
	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/checks/fileset"
	"github.com/idemlint/idemlint/checks/jsontree"
	"github.com/idemlint/idemlint/schemas"
)

// Result is the outcome of checking a boundary set.
type Result struct {
	Findings []Finding // sorted
	// Documents are every document that parsed, sorted by path, released
	// (typed model only: see boundary.Document.Release).
	Documents []*boundary.Document
	Files     int // files examined
}

// Check collects the files under paths and checks them as one set. Its
// error is a usage problem (a named path that does not exist); anything
// wrong inside the set is a finding.
func Check(paths []string, opts Options) (*Result, error) {
	files, skipped, err := fileset.Collect(paths)
	if err != nil {
		return nil, err
	}
	files, skipped = opts.leaveOut(files, skipped)
	res := CheckFiles(files, opts)
	for _, s := range skipped {
		res.Findings = append(res.Findings, unreadable(s.Path, s.Err))
	}
	SortFindings(res.Findings)
	return res, nil
}

// CheckFiles checks files as one set: each file is read, parsed and checked
// on its own by a pool of GOMAXPROCS workers, which then releases its parse
// tree; the cross-document rules run once over every document that parsed.
func CheckFiles(files []string, opts Options) *Result {
	opts.validator = schemas.NewValidator()
	type fileResult struct {
		doc          *boundary.Document
		findings     []Finding
		suppressions fileSuppressions
	}
	results := make([]fileResult, len(files))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(files), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(files) {
					return
				}
				src, err := fileset.Read(files[i])
				if err != nil {
					results[i].findings = []Finding{unreadable(files[i], err)}
					continue
				}
				r := &results[i]
				if r.doc, r.findings = CheckDocument(files[i], src, &opts); r.doc != nil {
					r.suppressions = readFile(r.doc, &opts)
					r.doc.Release()
				}
			}
		}()
	}
	wg.Wait()

	res := &Result{Files: len(files)}
	sup := &suppressions{entries: map[string][]*suppression{}}
	for _, r := range results {
		res.Findings = append(res.Findings, r.findings...)
		if r.doc != nil {
			res.Documents = append(res.Documents, r.doc)
			sup.add(r.doc.Path, r.suppressions)
		}
	}
	res.Findings = append(res.Findings, checkSet(res.Documents, len(files)-len(res.Documents), &opts)...)
	res.Findings = applyOverrides(res.Findings, sup, &opts)
	SortFindings(res.Findings)
	return res
}

// CheckDocument parses src and runs every per-document rule on it. The
// document is nil when src is not a JSON object.
func CheckDocument(path string, src []byte, opts *Options) (*boundary.Document, []Finding) {
	doc, problems := boundary.Parse(path, src)
	var findings []Finding
	for _, pr := range problems {
		findings = append(findings, Finding{Rule: IDL001.ID, Severity: IDL001.Severity, File: path,
			Line: pr.Line, Column: pr.Column, Pointer: pr.Pointer, Message: pr.Message})
	}
	if doc == nil {
		return nil, findings
	}
	for _, r := range Rules() {
		if r.CheckDocument != nil && !opts.Disabled[r.ID] {
			r.CheckDocument(&DocumentPass{Rule: r, Doc: doc, Options: opts, findings: &findings})
		}
	}
	return doc, findings
}

// CheckSet runs the cross-document rules over parsed documents, released or
// not. The chain graph is built once here, so no rule walks the documents
// again.
func CheckSet(docs []*boundary.Document, opts *Options) []Finding { return checkSet(docs, 0, opts) }

// checkSet is CheckSet for a set in which unparsed files did not decode
// into a document: the chain rules must know that a link may be missing.
func checkSet(docs []*boundary.Document, unparsed int, opts *Options) []Finding {
	var findings []Finding
	var pending []unplaced
	graph := chain.Build(docs)
	graph.Gaps += unparsed
	for _, r := range Rules() {
		if r.CheckSet != nil && !opts.Disabled[r.ID] {
			r.CheckSet(&SetPass{Rule: r, Docs: docs, Graph: graph, Options: opts, findings: &findings, unplaced: &pending})
		}
	}
	place(findings, pending)
	return findings
}

// place sets the line and column of cross-document findings from their
// pointers, parsing each document concerned once more if it has released
// its tree; findings concern few documents of a set.
func place(findings []Finding, pending []unplaced) {
	roots := map[*boundary.Document]*jsontree.Node{}
	for _, u := range pending {
		root, ok := roots[u.doc]
		if !ok {
			// A document exists only if its source parsed, so parsing the
			// same text again yields its root.
			if root = u.doc.Root; root == nil {
				root, _ = jsontree.Parse(u.doc.Position.Source())
			}
			roots[u.doc] = root
		}
		f := &findings[u.finding]
		f.Line, f.Column = u.doc.Position.At(root.Nearest(f.Pointer).Offset)
	}
}

func unreadable(path string, err error) Finding {
	return Finding{Rule: IDL001.ID, Severity: IDL001.Severity, File: path, Message: "cannot read file: " + err.Error()}
}
