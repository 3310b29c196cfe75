package checks

import (
	"github.com/idemlint/idemlint/checks/chain"
	"strings"

	"github.com/idemlint/idemlint/schemas/suggest"
)

// foldTypos is the stage that folds into IDL002's finding at a misspelt
// member the findings its typo explains: a document that writes
// "header_to_alow_outbound" gets IDL102 and IDL202 saying to add
// header_to_allow_outbound, which the one fix of the name answers. A
// finding is folded when it is another rule's, in the same file, at the
// pointer of an absent member of the same object that the unknown name is
// a typo of (as the schema stage's "did you mean" says); it becomes a
// related location of IDL002's finding. It runs after the suppressions
// and levels, so a suppressed or disabled IDL002 folds nothing.
func foldTypos(findings []Finding, docs []*chain.Facts) []Finding {
	// The IDL002 findings at an unknown member, by the file and object.
	type object struct{ file, pointer string }
	unknown := map[object][]int{}
	for i, f := range findings {
		if foldsAt(f) {
			parent, _ := splitPointer(f.Pointer)
			unknown[object{f.File, parent}] = append(unknown[object{f.File, parent}], i)
		}
	}
	if len(unknown) == 0 {
		return findings
	}
	folded := make([]bool, len(findings))
	for i, f := range findings {
		if f.Rule == idl002.ID || f.Pointer == "" {
			continue
		}
		parent, name := splitPointer(f.Pointer)
		for _, j := range unknown[object{f.File, parent}] {
			_, typo := splitPointer(findings[j].Pointer)
			if suggest.One(typo, []string{name}) != name || present(docs, f.File, f.Pointer) {
				continue
			}
			t := &findings[j]
			t.Related = append(t.Related, Location{File: f.File, Line: f.Line, Column: f.Column, Pointer: f.Pointer,
				Message: "folded here, as the fix of this name answers it: " + f.Rule + " " + f.Message})
			folded[i] = true
			break
		}
	}
	kept := findings[:0]
	for i, f := range findings {
		if !folded[i] {
			kept = append(kept, f)
		}
	}
	return kept
}

// foldsAt reports whether f is a finding that others may fold into: only
// a document with one asks present about its values.
func foldsAt(f Finding) bool { return f.Rule == idl002.ID && f.Pointer != "" }

// splitPointer splits a JSON Pointer into its parent's pointer and its
// last member name, unescaped.
func splitPointer(p string) (parent, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", ""
	}
	return p[:i], unescape.Replace(p[i+1:])
}

var unescape = strings.NewReplacer("~1", "/", "~0", "~")

// present reports whether the document at file holds a value at pointer.
func present(docs []*chain.Facts, file, pointer string) bool {
	for _, d := range docs {
		if d.Path == file {
			return d.Has(pointer)
		}
	}
	return false
}
