package checks

import (
	"regexp"
	"strconv"
	"sync"

	"github.com/idemlint/idemlint/schemas/boundary"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// IDL002 validates a document against the JSON Schema of its kind, plus
// the one structural constraint JSON Schema cannot state: operation_key is
// unique within a document.
var idl002 = &Rule{
	ID:       "IDL002",
	Name:     "schema",
	Severity: Error,
	Summary:  "the document matches the JSON Schema of its boundary kind",
	Doc: `Each boundary kind has a JSON Schema (draft 2020-12; print it with
"idemlint schema KIND"): required fields, types, enums, and no unknown fields.
An unknown field is almost always a typo ("require_keys" for "require_key"),
and a typo in a policy silently turns a safeguard off, so it is an error.
Extension fields whose names start with "x-" are allowed anywhere.
Operation keys must be unique within a document, because chains link
operations across hops by operation_key. Integers have bounds (max_attempts
1-100, every *_ms 0-86400000, statuses 100-599, max_length 1-8192): a value
beyond them, or beyond what a 64-bit integer holds, is reported here rather
than read as something else. Header names are RFC 9110 tokens, and
key_format.pattern must compile as a Go (RE2) regular expression, because
that is what the reference engine matches keys with.

Fix: correct the field the message names. Add "$schema" pointing at the
printed schema to get completion and inline errors in your editor.`,
	CheckDocument: func(p *DocumentPass) {
		seen := map[string]bool{}
		for _, op := range p.Doc.Operations.Items {
			if !op.Key.OK() {
				continue
			}
			if seen[op.Key.Value] {
				p.Report(op.Key.Pos, "duplicate operation_key %q; each operation of a document needs its own key", op.Key.Value)
			}
			seen[op.Key.Value] = true
		}
		// JSON Schema's propertyNames would say this too, but its errors
		// come back from the library without a reliable location.
		for _, op := range p.Doc.Operations.Items {
			if op.Example == nil {
				continue
			}
			for _, h := range op.Example.BadHeaderNames {
				p.Report(h.Pos, "example header name %q is not an HTTP header name (an RFC 9110 token: letters, digits and !#$%%&'*+-.^_`|~)", h.Name)
			}
		}
		// The engine matches keys with Go's regexp (RE2): a pattern it
		// cannot compile, such as a look-around, is no pattern at all.
		if pat := p.Doc.Idempotency.KeyFormat.Pattern; pat.OK() {
			if err := keyPatterns.compile(pat.Value); err != nil {
				p.Report(pat.Pos, "key_format.pattern is not a valid regular expression (Go RE2 syntax): %v", err)
			}
		}
	},
}

// keyPatterns remembers whether each distinct key_format.pattern
// compiles: a set repeats a handful of patterns over thousands of
// documents, and compiling one costs more than checking the rest of its
// document.
var keyPatterns = patternCache{verdicts: map[string]error{}}

// Bounds of patternCache: a longer pattern is rarely repeated, and past
// maxCachedPatterns distinct ones the cache stops growing (each pattern
// is then compiled as it comes, as without a cache).
const (
	maxCachedPattern  = 1 << 10
	maxCachedPatterns = 1 << 12
)

// patternCache is a bounded memo of regexp.Compile's verdict by pattern,
// safe for concurrent use.
type patternCache struct {
	mu       sync.RWMutex
	verdicts map[string]error
}

// compile returns regexp.Compile's error for pattern, compiling each
// distinct pattern once while the cache has room.
func (c *patternCache) compile(pattern string) error {
	c.mu.RLock()
	err, ok := c.verdicts[pattern]
	c.mu.RUnlock()
	if ok {
		return err
	}
	_, err = regexp.Compile(pattern)
	if len(pattern) <= maxCachedPattern {
		c.mu.Lock()
		if len(c.verdicts) < maxCachedPatterns {
			c.verdicts[pattern] = err
		}
		c.mu.Unlock()
	}
	return err
}

// schemaFindings is the schema stage: the document as written (tree, in
// src) against the schema of its kind. It runs before the tree is dropped,
// so each violation is placed at the nearest value its pointer reaches.
// The decoder has judged the document already: the stage, when one is
// installed, runs only on a document that does not conform, to word
// what is wrong; without one the decoder's verdict is the finding.
func schemaFindings(doc *boundary.Document, tree *jsontree.Node, src string, stage SchemaStage) []Finding {
	at := doc.Nonconforming
	if at == nil {
		return nil
	}
	if stage == nil {
		what := "the document"
		if at.Pointer != "" {
			what = strconv.Quote(at.Pointer)
		}
		return []Finding{{Rule: idl002.ID, Severity: idl002.Severity, File: doc.Path, Line: at.Line, Column: at.Column, Pointer: at.Pointer,
			Message: what + ` does not match the JSON Schema of its boundary kind (print it with "idemlint schema KIND")`}}
	}
	var out []Finding
	var pos *jsontree.Position
	stage.EachViolation(tree, src, func(pointer, message string) {
		if pos == nil {
			pos = jsontree.NewPosition(src)
		}
		line, col := pos.At(tree.Nearest(pointer).Offset)
		out = append(out, Finding{Rule: idl002.ID, Severity: idl002.Severity, File: doc.Path, Line: line, Column: col, Pointer: pointer, Message: message})
	})
	return out
}
