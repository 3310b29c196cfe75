package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/fixtures"
)

// TestInitFromOpenAPIPassesCheck holds "init --from-openapi" to its promise
// on every OpenAPI description of the fixtures: the set it writes passes
// "check" with no error finding, and "openapi check" against the same
// description with none but the IDL302s its summary announces.
func TestInitFromOpenAPIPassesCheck(t *testing.T) {
	cases, err := fixtures.Cases()
	if err != nil {
		t.Fatal(err)
	}
	specs := 0
	for _, c := range cases {
		if c.Spec == "" {
			continue
		}
		specs++
		t.Run(c.Dir, func(t *testing.T) {
			set := filepath.Join(t.TempDir(), "set")
			if err := c.Materialize(set); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			if code := run([]string{"init", "--verbose", "--from-openapi", filepath.Join(set, c.Spec), out}, &stdout, &stderr); code != 0 {
				t.Fatalf("init exited %d: %s", code, stderr.String())
			}
			notes := stdout.String()
			announced := keyGapNotes(notes)
			stdout.Reset()
			code := run([]string{"check", "--no-config", out}, &stdout, &stderr)
			if code != 0 || !strings.Contains(stdout.String(), " 0 errors") {
				t.Errorf("check of the starter set exited %d:\n%s%s", code, stdout.String(), stderr.String())
			}
			// Against the same description, the only errors are the
			// IDL302s init's summary announced.
			stdout.Reset()
			if code := run([]string{"openapi", "check", "--no-config", "--spec", filepath.Join(set, c.Spec), out}, &stdout, &stderr); code > 1 {
				t.Fatalf("openapi check of the starter set exited %d: %s", code, stderr.String())
			}
			for _, line := range strings.Split(stdout.String(), "\n") {
				_, finding, ok := strings.Cut(line, ": error ")
				if !ok {
					continue
				}
				op, _, _ := strings.Cut(strings.TrimPrefix(finding, "IDL302 "), ": ")
				if !strings.HasPrefix(finding, "IDL302 ") || !announced[op] {
					t.Errorf("openapi check of the starter set reports an error init did not announce: %s\ninit said:\n%s", line, notes)
				}
			}
		})
	}
	if specs == 0 {
		t.Fatal("no fixture set has an OpenAPI description")
	}
}

// keyGapNotes are the operations init's notes (--verbose) say IDL302 will
// name: the one note's, or the instances listed under the count.
func keyGapNotes(notes string) map[string]bool {
	ops := map[string]bool{}
	listing := false
	for _, line := range strings.Split(notes, "\n") {
		if inst, ok := strings.CutPrefix(line, "note:   "); ok {
			if listing {
				ops[inst] = true
			}
			continue
		}
		listing = false
		if strings.HasPrefix(line, "note: openapi check will report IDL302") {
			if _, op, ok := strings.Cut(line, "what to fix): "); ok && !strings.HasSuffix(op, " operations:") {
				ops[op] = true
			} else {
				listing = true
			}
		}
	}
	return ops
}
