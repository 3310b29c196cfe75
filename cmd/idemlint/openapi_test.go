package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
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

// TestInitFromStripeShapedServesForms: from a description shaped like
// Stripe's (form-encoded bodies, the key header named with --key-header),
// init writes a policy the engine serves as the API is called: a form POST
// with the key header is executed once, its duplicate with the pairs
// reordered is replayed, and the key reused with a changed field is a
// conflict.
func TestInitFromStripeShapedServesForms(t *testing.T) {
	archive, err := txtar.ParseFile(filepath.Join("testdata", "script", "openapi_world_stripe.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "stripe.yaml")
	for _, f := range archive.Files {
		if f.Name == "stripe.yaml" {
			if err := os.WriteFile(spec, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"init", "--key-header", "Idempotency-Key", "--from-openapi", spec, out}, &stdout, &stderr); code != 0 {
		t.Fatalf("init exited %d: %s", code, stderr.String())
	}
	s := startServe(t, "--policy", filepath.Join(out, "api", "04-adapter.json"))
	post := func(key, body string) (int, string, string) {
		t.Helper()
		req, err := http.NewRequest("POST", s.base+"/v1/charges", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("X-Tenant-Id", "tenant-a")
		r := testserver.Do(t, req)
		return r.Status, r.Header.Get("Idempotent-Replayed"), r.Body
	}
	created, _, first := post("charge-1", "amount=2000&currency=usd&metadata%5Border_id%5D=6735")
	if created >= 300 {
		t.Fatalf("the form POST: %d %s", created, first)
	}
	status, replayed, again := post("charge-1", "currency=usd&metadata%5Border_id%5D=6735&amount=2000")
	if status != created || replayed != "true" || again != first {
		t.Errorf("its duplicate, pairs reordered: %d replayed %q %s; want %d replayed %s", status, replayed, again, created, first)
	}
	if status, _, body := post("charge-1", "amount=2001&currency=usd&metadata%5Border_id%5D=6735"); status != 422 {
		t.Errorf("the key reused with another amount: %d %s; want 422", status, body)
	}
}
