package lsp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// client drives a server through pipes, as an editor would.
type client struct {
	t      *testing.T
	in     *io.PipeWriter // the server's stdin
	msgs   chan *message  // what the server wrote, read as it comes
	nextID int
	done   chan error // Serve's result
	// notes are notifications read while waiting for a response.
	notes []*message
}

func startServer(t *testing.T) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, msgs: make(chan *message, 1024), done: make(chan error, 1)}
	go func() {
		err := Serve(inR, outW, Options{Version: "test"})
		inR.Close() // a client still writing fails instead of blocking
		outW.Close()
		c.done <- err
	}()
	// Read all the time: pipes do not buffer, so a server writing while
	// the client writes would otherwise block both.
	go func() {
		defer close(c.msgs)
		out := newConn(outR, nil)
		for {
			m, err := out.read()
			if err != nil {
				return
			}
			c.msgs <- m
		}
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return c
}

func (c *client) send(method string, id int, params any) {
	c.t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id != 0 {
		m["id"] = id
	}
	body, err := json.Marshal(m)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) notify(method string, params any) { c.send(method, 0, params) }

// request sends a request and returns its response, keeping the
// notifications that came first.
func (c *client) request(method string, params any) *message {
	c.t.Helper()
	c.nextID++
	c.send(method, c.nextID, params)
	for {
		m := c.next()
		if m.Method != "" {
			c.notes = append(c.notes, m)
			continue
		}
		if string(m.ID) != fmt.Sprint(c.nextID) {
			c.t.Fatalf("response to id %s, want %d", m.ID, c.nextID)
		}
		return m
	}
}

func (c *client) next() *message {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatal("the server closed its output")
		}
		return m
	case <-time.After(20 * time.Second):
		c.t.Fatal("the server did not answer within 20s")
	}
	return nil
}

type published struct {
	URI         string       `json:"uri"`
	Diagnostics []diagnostic `json:"diagnostics"`
}

// diagnostics returns the last diagnostics published for each file since
// the last call, waiting for them behind a round trip: the server handles
// messages in order, so every notification a change causes comes before
// the answer to a later request.
func (c *client) diagnostics() map[string][]diagnostic {
	c.t.Helper()
	c.request("textDocument/hover", map[string]any{"textDocument": map[string]string{"uri": "file:///nowhere.json"}, "position": position{}})
	got := map[string][]diagnostic{}
	for _, n := range c.notes {
		if n.Method != "textDocument/publishDiagnostics" {
			continue
		}
		var p published
		if err := json.Unmarshal(n.Params, &p); err != nil {
			c.t.Fatal(err)
		}
		got[filepath.Base(p.URI)] = p.Diagnostics
	}
	c.notes = nil
	return got
}

// copySet copies a fixture set into a temporary directory.
func copySet(t *testing.T, set string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "fixtures", set, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fixture set %s: %v", set, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func initialize(c *client, dir string, encodings ...string) {
	c.t.Helper()
	params := map[string]any{"rootUri": uriOf(dir), "capabilities": map[string]any{"general": map[string]any{"positionEncodings": encodings}}}
	res := c.request("initialize", params)
	if res.Error != nil {
		c.t.Fatalf("initialize: %v", res.Error)
	}
	c.notify("initialized", map[string]any{})
}

func TestSessionOverlaysUnsavedBuffersForChainRules(t *testing.T) {
	dir := copySet(t, "valid/orders-basic")
	c := startServer(t)
	initialize(c, dir)
	if got := c.diagnostics(); len(got) != 0 {
		t.Fatalf("a valid set published %v, want nothing", got)
	}

	// The adapter, unsaved, no longer accepts the key header: the chain
	// rule IDL202 reports it, in a buffer whose file on disk is fine.
	adapter := filepath.Join(dir, "04-adapter.json")
	saved, err := os.ReadFile(adapter)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(saved), `"http_idempotency": {`, `"header_to_allow_inbound": ["content-type", "x-tenant-id", "x-actor-id"],
  "http_idempotency": {`, 1)
	if broken == string(saved) {
		t.Fatal("fixture changed: cannot give the adapter an inbound allowlist")
	}
	uri := uriOf(adapter)
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "json", "version": 1, "text": broken}})
	got := c.diagnostics()["04-adapter.json"]
	if len(got) != 1 || got[0].Code != "IDL202" || got[0].Severity != 1 || got[0].Source != "idemlint" {
		t.Fatalf("after opening a broken adapter: %+v, want one IDL202 error", got)
	}
	line := got[0].Range.Start.Line

	// Hover on that line explains the rule.
	res := c.request("textDocument/hover", map[string]any{"textDocument": map[string]string{"uri": uri}, "position": position{Line: line, Character: 0}})
	var hover struct {
		Contents struct{ Kind, Value string }
	}
	if err := json.Unmarshal(res.Result, &hover); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hover.Contents.Value, "IDL202 key-") && !strings.Contains(hover.Contents.Value, "Bad: fixtures/rules/IDL202/") {
		t.Errorf("hover = %q, want the explanation of IDL202", hover.Contents.Value)
	}
	res = c.request("textDocument/hover", map[string]any{"textDocument": map[string]string{"uri": uri}, "position": position{Line: 0}})
	if string(res.Result) != "null" {
		t.Errorf("hover on a line without findings = %s, want null", res.Result)
	}

	// The code action inserts a suppression; applied, it hides the finding
	// and IDL003 accepts it.
	res = c.request("textDocument/codeAction", map[string]any{"textDocument": map[string]string{"uri": uri}, "range": got[0].Range, "context": map[string]any{"diagnostics": got}})
	var actions []struct {
		Title string
		Edit  struct{ Changes map[string][]textEdit }
	}
	if err := json.Unmarshal(res.Result, &actions); err != nil {
		t.Fatal(err)
	}
	if len(actions) != 1 || len(actions[0].Edit.Changes[uri]) != 1 {
		t.Fatalf("code actions = %+v, want one edit of %s", actions, uri)
	}
	fixed := apply(t, broken, actions[0].Edit.Changes[uri][0])
	// The reason names the finding, so that IDL003 accepts the entry.
	if !strings.Contains(fixed, `"x-idemlint-ignore": [{"rule": "IDL202", "reason": "accepted here: orders.create: `) {
		t.Errorf("edited document lacks the entry:\n%s", fixed)
	}
	c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2}, "contentChanges": []map[string]string{{"text": fixed}}})
	if got := c.diagnostics()["04-adapter.json"]; got == nil || len(got) != 0 {
		t.Errorf("after the suppression: %+v, want an empty list published", got)
	}

	// Closing the buffer without saving: the file on disk is checked again.
	c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 3}, "contentChanges": []map[string]string{{"text": broken}}})
	if got := c.diagnostics()["04-adapter.json"]; len(got) != 1 {
		t.Fatalf("after breaking it again: %+v", got)
	}
	c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	if got := c.diagnostics()["04-adapter.json"]; got == nil || len(got) != 0 {
		t.Errorf("after closing unsaved: %+v, want the clean file's empty list", got)
	}

	if res := c.request("shutdown", nil); string(res.Result) != "null" || res.Error != nil {
		t.Errorf("shutdown answered %s %v", res.Result, res.Error)
	}
	c.notify("exit", nil)
	if err := <-c.done; err != nil {
		t.Errorf("Serve after shutdown and exit = %v, want nil", err)
	}
}

// apply applies one edit to text (positions in UTF-16, the default).
func apply(t *testing.T, text string, e textEdit) string {
	t.Helper()
	lines := strings.SplitAfter(text, "\n")
	off := 0
	for _, l := range lines[:e.Range.Start.Line] {
		off += len(l)
	}
	off += len(string([]rune(lines[e.Range.Start.Line])[:e.Range.Start.Character]))
	if e.Range.Start != e.Range.End {
		t.Fatalf("edit replaces text: %+v", e)
	}
	return text[:off] + e.NewText + text[off:]
}

func TestIgnoreEdit(t *testing.T) {
	const reason = `accepted here: "a" -> b`
	entry := `{"rule": "IDL112", "reason": "accepted here: \"a\" -> b"}`
	cases := []struct{ name, text, want string }{
		{"no array", "{\n  \"a\": 1\n}", "{\n  \"x-idemlint-ignore\": [" + entry + "],\n  \"a\": 1\n}"},
		{"empty object", "{}", "{\n  \"x-idemlint-ignore\": [" + entry + "]}"},
		{"empty array", `{"x-idemlint-ignore": []}`, `{"x-idemlint-ignore": [` + entry + `]}`},
		{"array on one line", `{"x-idemlint-ignore": [{"rule": "IDL101", "reason": "r"}]}`, `{"x-idemlint-ignore": [` + entry + `, {"rule": "IDL101", "reason": "r"}]}`},
		{"array on lines", "{\"x-idemlint-ignore\": [\n    {\"rule\": \"IDL101\", \"reason\": \"r\"}\n]}", "{\"x-idemlint-ignore\": [\n    " + entry + ",\n    {\"rule\": \"IDL101\", \"reason\": \"r\"}\n]}"},
	}
	for _, tc := range cases {
		e, ok := ignoreEdit(tc.text, utf16, "IDL112", reason)
		if !ok {
			t.Errorf("%s: no edit", tc.name)
			continue
		}
		if got := apply(t, tc.text, e); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	for _, text := range []string{`[]`, `{"x-idemlint-ignore": {}}`, `{"x-idemlint-ignore": [{"rule": "IDL112", "reason": "r"}]}`, `{`} {
		if _, ok := ignoreEdit(text, utf16, "IDL112", reason); ok {
			t.Errorf("%s: an edit, want none", text)
		}
	}
}

func TestPositionsCountTheNegotiatedUnits(t *testing.T) {
	text := "{\n  \"é𝄞\": 1\n}"
	// Column 9 (code points) is the value 1, after 8 characters: two
	// spaces, a quote, é (2 UTF-8 bytes), 𝄞 (4 bytes, 2 UTF-16 units), a
	// quote, a colon and a space.
	for enc, want := range map[string]int{utf16: 9, utf8e: 12, utf32: 8} {
		if got := at(text, enc, 2, 9); got != (position{Line: 1, Character: want}) {
			t.Errorf("%s: at(2, 9) = %+v, want character %d", enc, got, want)
		}
	}
}

func TestBrokenMessagesEndTheSession(t *testing.T) {
	cases := map[string]string{
		"no length":       "Content-Type: x\r\n\r\n{}",
		"bad length":      "Content-Length: many\r\n\r\n",
		"huge length":     fmt.Sprintf("Content-Length: %d\r\n\r\n", MaxMessage+1),
		"not JSON":        "Content-Length: 8\r\n\r\nnot json",
		"not JSON-RPC":    "Content-Length: 2\r\n\r\n{}",
		"short body":      "Content-Length: 100\r\n\r\n{}",
		"no colon":        "Content-Length 2\r\n\r\n{}",
		"endless header":  "X: " + strings.Repeat("a", 2*maxHeaderLine),
		"cut in a header": "Content-Length: 2\r\n",
	}
	for name, input := range cases {
		var out strings.Builder
		err := Serve(strings.NewReader(input), &out, Options{})
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			t.Errorf("%s: Serve = %v, want a *ProtocolError", name, err)
			continue
		}
		// The client is told, as JSON-RPC asks, with a parse error.
		r := newConn(strings.NewReader(out.String()), nil)
		m, rerr := r.read()
		if rerr != nil || m.Error == nil || m.Error.Code != codeParseError || string(m.ID) != "null" {
			t.Errorf("%s: answered %+v (%v), want a parse error", name, m, rerr)
		}
	}
}

func TestSessionRules(t *testing.T) {
	// Requests before initialize are refused; unknown methods are not
	// served; exit without shutdown is a failure.
	c := startServer(t)
	if res := c.request("textDocument/hover", map[string]any{}); res.Error == nil || res.Error.Code != codeServerNotInitialized {
		t.Errorf("hover before initialize: %+v", res)
	}
	initialize(c, t.TempDir(), "utf-32", "utf-16")
	if res := c.request("workspace/symbol", map[string]any{}); res.Error == nil || res.Error.Code != codeMethodNotFound {
		t.Errorf("unknown method: %+v", res)
	}
	if res := c.request("textDocument/hover", "not an object"); res.Error == nil || res.Error.Code != codeInvalidParams {
		t.Errorf("bad params: %+v", res)
	}
	c.notify("exit", nil)
	if err := <-c.done; !errors.Is(err, ErrExitWithoutShutdown) {
		t.Errorf("exit without shutdown: %v", err)
	}

	// A stream that ends without shutdown is the same failure.
	if err := Serve(strings.NewReader(""), io.Discard, Options{}); !errors.Is(err, ErrExitWithoutShutdown) {
		t.Errorf("EOF without shutdown: %v", err)
	}
}

// A burst of changes that arrives together is checked once, with the last
// text.
func TestBurstOfChangesIsCheckedOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startServer(t)
	initialize(c, dir)
	c.diagnostics()
	uri := uriOf(path)
	var burst strings.Builder
	frame := func(m map[string]any) {
		m["jsonrpc"] = "2.0"
		body, _ := json.Marshal(m)
		fmt.Fprintf(&burst, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	frame(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{"textDocument": map[string]any{"uri": uri, "text": "{"}}})
	for _, text := range []string{"{\"a", "{\"a\":", `{"boundary": "adapter"}`} {
		frame(map[string]any{"method": "textDocument/didChange", "params": map[string]any{"textDocument": map[string]any{"uri": uri}, "contentChanges": []map[string]string{{"text": text}}}})
	}
	if _, err := io.WriteString(c.in, burst.String()); err != nil {
		t.Fatal(err)
	}
	c.request("textDocument/hover", map[string]any{"textDocument": map[string]string{"uri": uri}, "position": position{}})
	count := 0
	var last published
	for _, n := range c.notes {
		if n.Method == "textDocument/publishDiagnostics" {
			count++
			if err := json.Unmarshal(n.Params, &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	if count != 1 {
		t.Errorf("published %d times for one burst, want once", count)
	}
	for _, d := range last.Diagnostics {
		if d.Code == "IDL001" {
			t.Errorf("diagnostics of an intermediate text: %+v", d)
		}
	}
	if len(last.Diagnostics) == 0 {
		t.Error("no diagnostics for the last text, an adapter without its fields")
	}
}

// The language server reads the as-built configuration that
// .idemlint.json names, as "idemlint check" does: an edge's as_built entry
// that names no resource read is IDL407 in the editor too.
func TestSessionReadsTheAsBuiltConfiguration(t *testing.T) {
	dir := copySet(t, "valid/orders-basic")
	edge := filepath.Join(dir, "02-bff-to-gateway.json")
	saved, err := os.ReadFile(edge)
	if err != nil {
		t.Fatal(err)
	}
	named := strings.Replace(string(saved), `"to": "edge-gw",`, `"to": "edge-gw", "as_built": [{"kind": "HTTPRoute", "name": "edge"}],`, 1)
	if named == string(saved) {
		t.Fatal("fixture changed: cannot name the edge's resources")
	}
	if err := os.WriteFile(edge, []byte(named), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startServer(t)
	initialize(c, dir)
	if got := c.diagnostics(); len(got) != 0 {
		t.Fatalf("without an as-built configuration: %v, want nothing", got)
	}

	manifest := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: other, namespace: shop}\nspec:\n  rules:\n  - backendRefs: [{name: edge-gw}]\n"
	if err := os.MkdirAll(filepath.Join(dir, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deploy", "routes.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".idemlint.json"), []byte(`{"as_built": {"paths": ["deploy"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := uriOf(edge)
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "json", "version": 1, "text": named}})
	got := c.diagnostics()["02-bff-to-gateway.json"]
	if len(got) != 1 || got[0].Code != "IDL407" || got[0].Range.Start.Line != 4 {
		t.Fatalf("with as_built in .idemlint.json: %+v, want one IDL407 on line 5", got)
	}
}

// An as-built file that cannot be read, and a value of one that is not
// understood, are IDL001 diagnostics of that file, as "idemlint check"
// reports them, though no boundary document is open.
func TestSessionPublishesAsBuiltFileFindings(t *testing.T) {
	dir := copySet(t, "valid/orders-basic")
	if err := os.MkdirAll(filepath.Join(dir, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		".idemlint.json":      `{"as_built": {"paths": ["deploy"]}}`,
		"deploy/broken.yaml":  "kind: HTTPRoute\nspec: [unclosed\n",
		"deploy/routes.yaml":  "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: orders, namespace: shop}\nspec:\n  http:\n  - route: [{destination: {host: orders}}]\n    retries: {attempts: two}\n",
		"deploy/service.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: orders}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := startServer(t)
	initialize(c, dir)
	got := c.diagnostics()
	type at struct {
		code            string
		line, character int
		severity        int
		messagePrefix   string
	}
	want := map[string]at{
		"broken.yaml": {"IDL001", 2, 0, 1, "cannot read this as-built file: not valid YAML or JSON"},
		"routes.yaml": {"IDL001", 6, 24, 1, `as-built value not used: retries.attempts is "two", not a whole number`},
	}
	if len(got) != len(want) {
		t.Errorf("published for %d files, want %d: %+v", len(got), len(want), got)
	}
	for file, w := range want {
		ds := got[file]
		if len(ds) != 1 || ds[0].Code != w.code || ds[0].Severity != w.severity || ds[0].Range.Start.Line != w.line ||
			ds[0].Range.Start.Character != w.character || !strings.HasPrefix(ds[0].Message, w.messagePrefix) {
			t.Errorf("%s: %+v, want one %+v", file, ds, w)
		}
	}
}
