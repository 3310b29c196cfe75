package starter

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/checks/openapi"
	"github.com/idemlint/idemlint/reference"
)

// The starter set passes check, each document names its kind's schema
// under SchemaDir, and the set carries those schemas.
func TestNewIsACleanSetWithItsSchemas(t *testing.T) {
	set, err := New(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := set.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 8 || files[0] != filepath.Join(dir, ".schemas", "adapter.schema.json") || files[4] != filepath.Join(dir, "01-browser-to-bff.json") {
		t.Errorf("Write created %v, want the four schemas, then the four documents", files)
	}
	adapter, err := os.ReadFile(filepath.Join(dir, "04-adapter.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"$schema\": \"./.schemas/adapter.schema.json\","; !strings.HasPrefix(string(adapter), want) {
		t.Errorf("04-adapter.json starts %.60q, want %q", adapter, want)
	}
	res, err := checks.CheckPaths([]string{dir}, lint.DefaultOptions())
	if err != nil || len(res.Findings) != 0 || len(res.Facts) != 4 {
		t.Errorf("check of the starter set: %v, %d documents, findings %v; want 4 clean documents", err, len(res.Facts), res.Findings)
	}
}

func TestWriteNeverOverwrites(t *testing.T) {
	set, err := New(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	taken := filepath.Join(dir, "04-adapter.json")
	if err := os.WriteFile(taken, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = set.Write(dir)
	if want := "refusing to overwrite " + taken + "; nothing written"; err == nil || err.Error() != want {
		t.Errorf("Write = %v, want %s", err, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("Write left %d entries, want only the file that was there", len(entries))
	}
}

// A flow per tag, each in its directory, whose documents name the schemas
// one level up.
func TestNewFromOpenAPI(t *testing.T) {
	api, err := openapi.Load(writeSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	set, err := New(api, "")
	if err != nil {
		t.Fatal(err)
	}
	doc, ok := set.Files["orders/04-adapter.json"]
	if !ok || !strings.Contains(string(doc.Data), `"$schema": "../.schemas/adapter.schema.json"`) {
		t.Errorf("orders/04-adapter.json: %v, want it naming ../.schemas/adapter.schema.json; files %v", ok, keys(set))
	}
	// The description declares no key header for its one write.
	if len(set.KeyGaps) != 1 {
		t.Errorf("KeyGaps = %v, want the one operation", set.KeyGaps)
	}
}

// A description whose writes take forms (Stripe) and JSON gets a policy
// that reads each by its media type, and the engine runs it: a form POST
// and its duplicate with the fields in another order are one payload, a
// changed field another, and a body of a type the description does not
// name is refused.
func TestNewFromOpenAPIFormBodies(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "openapi.yaml")
	err := os.WriteFile(spec, []byte(`openapi: 3.0.3
info: {title: payments, version: "2024-06-20"}
paths:
  /v1/payment_intents:
    post:
      operationId: PostPaymentIntents
      tags: [payments]
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: {type: object}
      responses: {"200": {description: ok}}
  /v1/customers:
    post:
      operationId: PostCustomers
      tags: [payments]
      requestBody:
        content:
          application/json; charset=utf-8:
            schema: {type: object}
      responses: {"200": {description: ok}}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	api, err := openapi.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	set, err := New(api, "")
	if err != nil {
		t.Fatal(err)
	}
	doc := set.Files["payments/04-adapter.json"].Data
	for _, want := range []string{
		`"canonicalization": {"application/json": "canonical_json", "application/x-www-form-urlencoded": "canonical_form"}`,
		`"operation_key": "postpaymentintents", "method": "POST", "path": "/v1/payment_intents", "example": {"headers": {"Content-Type": "application/x-www-form-urlencoded"}}}`,
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("payments/04-adapter.json lacks %s:\n%s", want, doc)
		}
	}
	e, err := reference.New("04-adapter.json", doc)
	if err != nil {
		t.Fatal(err)
	}
	executions := 0
	h := e.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		executions++
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "execution %d", executions)
	}))
	keyHeader := e.Policy().Idempotency.KeyHeader()
	send := func(contentType, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/v1/payment_intents", strings.NewReader(body))
		r.Header.Set(keyHeader, "key-1")
		r.Header.Set("Content-Type", contentType)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	const form = "application/x-www-form-urlencoded"
	first := send(form, "amount=2000&currency=usd&payment_method_types[]=card&metadata[order_id]=6735")
	again := send(form, "metadata%5Border_id%5D=6735&currency=usd&payment_method_types%5B%5D=card&amount=2000")
	if first.Code != 200 || again.Code != 200 || again.Body.String() != first.Body.String() {
		t.Errorf("form POST %d %q, reordered duplicate %d %q; want the first answer replayed", first.Code, first.Body, again.Code, again.Body)
	}
	if w := send(form, "amount=2001&currency=usd&payment_method_types[]=card&metadata[order_id]=6735"); w.Code != 422 {
		t.Errorf("changed field: %d %s, want 422", w.Code, w.Body)
	}
	if w := send("multipart/form-data; boundary=x", "--x--"); w.Code != 415 {
		t.Errorf("undeclared media type: %d %s, want 415", w.Code, w.Body)
	}
}

// Init says what it created and what to run next; into a directory that
// holds the set already it writes and says nothing.
func TestInit(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	if err := Init(dir, Options{}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != 9 || lines[4] != "created "+filepath.Join(dir, "01-browser-to-bff.json") || stderr.Len() != 0 {
		t.Errorf("Init said %q on stdout, %q on stderr; want eight files created", lines, stderr.String())
	}
	if want := "next: rename the components and operations, then run: idemlint check " + dir; lines[len(lines)-1] != want {
		t.Errorf("Init ends %q, want %q", lines[len(lines)-1], want)
	}
	stdout.Reset()
	if err := Init(dir, Options{}, &stdout, &stderr); err == nil || !strings.HasPrefix(err.Error(), "refusing to overwrite ") || stdout.Len() != 0 {
		t.Errorf("Init again = %v, said %q; want the refusal alone", err, stdout.String())
	}
}

// Init from a description writes its flows and names the description in
// what to run next; a description that cannot be loaded writes nothing.
func TestInitFromOpenAPI(t *testing.T) {
	spec, dir := writeSpec(t), t.TempDir()
	var stdout, stderr strings.Builder
	if err := Init(dir, Options{Spec: spec}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	want := "next: adapt each flow's components and policy, then run: idemlint openapi check --spec " + spec + " " + dir + "\n"
	if _, err := os.Stat(filepath.Join(dir, "orders", "04-adapter.json")); err != nil || !strings.HasSuffix(stdout.String(), want) {
		t.Errorf("Init from %s: %v, said %q; want the orders flow written and to end with %q", spec, err, stdout.String(), want)
	}
	empty := t.TempDir()
	missing := filepath.Join(empty, "missing.yaml")
	if err := Init(empty, Options{Spec: missing}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("Init from a missing description = %v, want an error naming it", err)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("Init from a missing description wrote %d entries, want none", len(entries))
	}
}

// writeSpec writes an OpenAPI description of one tagged write, which
// declares no key header, and returns its path.
func writeSpec(t *testing.T) string {
	t.Helper()
	spec := filepath.Join(t.TempDir(), "openapi.yaml")
	err := os.WriteFile(spec, []byte(`openapi: 3.0.3
info: {title: shop, version: "2"}
paths:
  /orders:
    post:
      operationId: createOrder
      tags: [orders]
      responses: {"201": {description: created}}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func keys(s *Set) []string {
	var out []string
	for p := range s.Files {
		out = append(out, p)
	}
	return out
}
