// Package lsp is idemlint's language server: over stdin and stdout it
// checks the boundary set an editor has open, with the editor's unsaved
// buffers standing in for their files, and publishes every finding
// (chain rules included) as a diagnostic on open, change and save. Hover
// on a finding shows "idemlint explain" for its rule; a code action adds
// an x-idemlint-ignore entry for it, with a reason to fill in.
package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/explain"
	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/checks/report"
	"github.com/idemlint/idemlint/schemas/fileset"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// ErrExitWithoutShutdown is returned when the client asks the server to
// exit, or goes away, without asking it to shut down first: the protocol
// makes that a failure.
var ErrExitWithoutShutdown = errors.New("the client ended the session without a shutdown request")

// Options configure the server.
type Options struct {
	Version string // reported to the client
	// Log receives one line per problem the client cannot be told about
	// over the protocol; nil discards them.
	Log io.Writer
}

// Serve runs a language server session on in and out until the client
// exits. It returns nil after shutdown and exit, ErrExitWithoutShutdown
// when the session ends otherwise, and a *ProtocolError for a message it
// cannot read, after answering it with a JSON-RPC parse error.
func Serve(in io.Reader, out io.Writer, opts Options) error {
	s := &server{conn: newConn(in, out), opts: opts, open: map[string]*buffer{}, published: map[string]bool{}, encoding: utf16}
	if s.opts.Log == nil {
		s.opts.Log = io.Discard
	}
	for {
		m, err := s.conn.read()
		var protocol *ProtocolError
		switch {
		case err == io.EOF:
			if s.shutdown {
				return nil
			}
			return ErrExitWithoutShutdown
		case errors.As(err, &protocol):
			_ = s.conn.replyError(nil, codeParseError, "%s", protocol.Reason)
			return err
		case err != nil:
			return err
		}
		if m.Method == "exit" {
			if s.shutdown {
				return nil
			}
			return ErrExitWithoutShutdown
		}
		if err := s.handle(m); err != nil {
			return err
		}
		// Typing sends a change per keystroke: check once the burst that
		// is already here has been read, not once per change.
		if s.conn.r.Buffered() == 0 {
			if err := s.checkIfChanged(); err != nil {
				return err
			}
		}
	}
}

type server struct {
	conn *conn
	opts Options

	initialized bool
	shutdown    bool
	changed     bool               // documents changed since the last check
	encoding    string             // of LSP positions
	root        string             // absolute directory of the checked set
	open        map[string]*buffer // by absolute path
	published   map[string]bool    // files whose diagnostics are not empty
	findings    map[string][]checks.Finding
	shown       string // the last problem shown with window/showMessage
}

// buffer is a document the editor has open, as the editor has it.
type buffer struct {
	uri  string
	text string
}

// handle answers one request or acts on one notification. Its error ends
// the session: only failing to write to the client does.
func (s *server) handle(m *message) error {
	isRequest := m.ID != nil
	if !s.initialized && m.Method != "initialize" {
		if isRequest {
			return s.conn.replyError(m.ID, codeServerNotInitialized, "initialize first")
		}
		return nil
	}
	switch m.Method {
	case "initialize":
		var p initializeParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return s.conn.replyError(m.ID, codeInvalidParams, "initialize: %v", err)
		}
		return s.conn.reply(m.ID, s.initialize(p))
	case "initialized":
		s.changed = true
		return nil
	case "shutdown":
		s.shutdown = true
		return s.conn.reply(m.ID, nil)
	case "textDocument/didOpen", "textDocument/didChange", "textDocument/didSave", "textDocument/didClose":
		var p didParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			fmt.Fprintf(s.opts.Log, "idemlint lsp: %s: %v\n", m.Method, err)
			return nil
		}
		s.track(m.Method, p)
		s.changed = true
		return nil
	case "textDocument/hover":
		var p positionParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return s.conn.replyError(m.ID, codeInvalidParams, "hover: %v", err)
		}
		if err := s.checkIfChanged(); err != nil {
			return err
		}
		return s.conn.reply(m.ID, s.hover(p))
	case "textDocument/codeAction":
		var p codeActionParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return s.conn.replyError(m.ID, codeInvalidParams, "codeAction: %v", err)
		}
		if err := s.checkIfChanged(); err != nil {
			return err
		}
		return s.conn.reply(m.ID, s.codeActions(p))
	}
	if isRequest {
		return s.conn.replyError(m.ID, codeMethodNotFound, "idemlint does not serve %q", m.Method)
	}
	return nil // notifications the server has no use for ($/cancelRequest, ...)
}

type initializeParams struct {
	RootURI          string `json:"rootUri"`
	WorkspaceFolders []struct {
		URI string `json:"uri"`
	} `json:"workspaceFolders"`
	Capabilities struct {
		General struct {
			PositionEncodings []string `json:"positionEncodings"`
		} `json:"general"`
	} `json:"capabilities"`
}

// initialize picks the set to check, the first workspace folder or the
// root, else the working directory, and the position encoding: code
// points when the client takes them (findings count them), else UTF-8,
// else the protocol's default, UTF-16.
func (s *server) initialize(p initializeParams) any {
	s.initialized = true
	root := p.RootURI
	if len(p.WorkspaceFolders) > 0 {
		root = p.WorkspaceFolders[0].URI
	}
	if path, ok := pathOf(root); ok {
		s.root = path
	} else if wd, err := os.Getwd(); err == nil {
		s.root = wd
	}
	for _, want := range []string{utf32, utf8e} {
		if slices.Contains(p.Capabilities.General.PositionEncodings, want) {
			s.encoding = want
			break
		}
	}
	return map[string]any{
		"capabilities": map[string]any{
			"positionEncoding": s.encoding,
			"textDocumentSync": map[string]any{"openClose": true, "change": 1, "save": map[string]bool{"includeText": false}},
			"hoverProvider":    true,
			"codeActionProvider": map[string]any{
				"codeActionKinds": []string{"quickfix"},
			},
		},
		"serverInfo": map[string]string{"name": "idemlint", "version": s.opts.Version},
	}
}

type didParams struct {
	TextDocument struct {
		URI  string `json:"uri"`
		Text string `json:"text"`
	} `json:"textDocument"`
	// ContentChanges of didChange: the server asks for whole documents
	// (textDocumentSync.change 1), so the last change is the text.
	ContentChanges []struct {
		Text string `json:"text"`
	} `json:"contentChanges"`
}

// track keeps the editor's text of open documents.
func (s *server) track(method string, p didParams) {
	path, ok := pathOf(p.TextDocument.URI)
	if !ok {
		return
	}
	switch method {
	case "textDocument/didOpen":
		s.open[path] = &buffer{uri: p.TextDocument.URI, text: p.TextDocument.Text}
	case "textDocument/didChange":
		if b := s.open[path]; b != nil && len(p.ContentChanges) > 0 {
			b.text = p.ContentChanges[len(p.ContentChanges)-1].Text
		}
	case "textDocument/didClose":
		delete(s.open, path)
	}
}

// checkIfChanged checks the set if a document changed since the last check;
// hover and code actions need findings of the text they are asked about.
func (s *server) checkIfChanged() error {
	if !s.changed {
		return nil
	}
	s.changed = false
	return s.check()
}

// check checks the whole set, open buffers overlaid, and publishes the
// diagnostics of every file whose findings may have changed.
func (s *server) check() error {
	opts := s.options()
	open := texts(s.open)
	opts.Files.ReadFile = func(path string) ([]byte, error) {
		if text, ok := open[path]; ok {
			return []byte(text), nil
		}
		return fileset.Read(path)
	}
	paths := []string{s.root}
	for path := range s.open {
		// An open document outside the set is checked with it, if it is
		// on disk (CheckPaths names files that exist).
		if rel, err := filepath.Rel(s.root, path); err != nil || strings.HasPrefix(rel, "..") {
			if _, err := os.Stat(path); err == nil {
				paths = append(paths, path)
			}
		}
	}
	res, err := checks.CheckPaths(paths, opts)
	if err != nil {
		return s.showError(err.Error())
	}
	byFile := map[string][]checks.Finding{}
	for _, f := range res.Findings {
		path, err := filepath.Abs(f.File)
		if err != nil {
			continue
		}
		byFile[path] = append(byFile[path], f)
	}
	s.findings = byFile
	var files []string
	for path := range byFile {
		files = append(files, path)
	}
	for path := range s.published {
		if byFile[path] == nil {
			files = append(files, path)
		}
	}
	sort.Strings(files)
	s.published = map[string]bool{}
	for _, path := range files {
		if err := s.publish(path, byFile[path], opts.Files.ReadFile); err != nil {
			return err
		}
		if len(byFile[path]) > 0 {
			s.published[path] = true
		}
	}
	return nil
}

// texts copies the open buffers' texts, for the checker's workers.
func texts(open map[string]*buffer) map[string]string {
	texts := make(map[string]string, len(open))
	for path, b := range open {
		texts[path] = b.text
	}
	return texts
}

// options are the project's settings, as "idemlint check" reads them from
// the nearest .idemlint.json, its as-built configuration included; a
// configuration that does not load is shown to the user once, and the
// defaults apply meanwhile.
func (s *server) options() checks.Options {
	opts, cfg, err := lint.Options(s.root, lint.Settings{})
	if err != nil {
		_ = s.showError(err.Error())
		return lint.DefaultOptions()
	}
	if err := lint.Inputs(&opts, cfg, lint.Settings{}); err != nil {
		_ = s.showError(err.Error())
		return opts
	}
	s.shown = ""
	return opts
}

// showError tells the user about a problem with no place in a document,
// once until it changes.
func (s *server) showError(msg string) error {
	if msg == s.shown {
		return nil
	}
	s.shown = msg
	return s.conn.notify("window/showMessage", map[string]any{"type": 1, "message": "idemlint: " + msg})
}

type diagnostic struct {
	Range           textRange         `json:"range"`
	Severity        int               `json:"severity"`
	Code            string            `json:"code"`
	CodeDescription map[string]string `json:"codeDescription"`
	Source          string            `json:"source"`
	Message         string            `json:"message"`
}

func (s *server) publish(path string, findings []checks.Finding, read func(string) ([]byte, error)) error {
	text := ""
	if len(findings) > 0 {
		src, _ := read(path) // unreadable: IDL001, placed at the start
		text = string(src)
	}
	diags := []diagnostic{}
	for _, f := range findings {
		d := diagnostic{Range: s.rangeOf(text, f), Severity: 2, Code: f.Rule, Source: "idemlint", Message: f.Message,
			CodeDescription: map[string]string{"href": report.HelpURI(f.Rule)}}
		if f.Severity == checks.Error {
			d.Severity = 1
		}
		diags = append(diags, d)
	}
	uri := uriOf(path)
	if b := s.open[path]; b != nil {
		uri = b.uri // as the editor spells it
	}
	return s.conn.notify("textDocument/publishDiagnostics", map[string]any{"uri": uri, "diagnostics": diags})
}

// rangeOf underlines a finding from its position to the end of its line.
func (s *server) rangeOf(text string, f checks.Finding) textRange {
	if f.Line == 0 {
		return textRange{}
	}
	start := at(text, s.encoding, f.Line, f.Column)
	end := lineEnd(text, s.encoding, f.Line)
	if end.Character < start.Character {
		end = start
	}
	return textRange{Start: start, End: end}
}

type positionParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	Position position `json:"position"`
}

// hover explains the rules of the findings on the hovered line.
func (s *server) hover(p positionParams) any {
	path, ok := pathOf(p.TextDocument.URI)
	if !ok {
		return nil
	}
	var b strings.Builder
	seen := map[string]bool{}
	for _, f := range s.findings[path] {
		if f.Line-1 != p.Position.Line || seen[f.Rule] {
			continue
		}
		seen[f.Rule] = true
		r, ok := lint.Rules.Lookup(f.Rule)
		if !ok {
			continue
		}
		var text bytes.Buffer
		if err := explain.Write(&text, r); err != nil {
			fmt.Fprintf(s.opts.Log, "idemlint lsp: explain %s: %v\n", r.ID, err)
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n---\n\n")
		}
		fmt.Fprintf(&b, "**%s** %s\n\n```text\n%s```\n", f.Rule, f.Message, text.String())
	}
	if b.Len() == 0 {
		return nil
	}
	return map[string]any{"contents": map[string]string{"kind": "markdown", "value": b.String()}}
}

type codeActionParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	Range   textRange `json:"range"`
	Context struct {
		Diagnostics []diagnostic `json:"diagnostics"`
	} `json:"context"`
}

// ignoreReason is the reason a new suppression carries: the finding it
// hides, so that the entry passes IDL003 (a placeholder such as "TODO"
// would be a reason in name only) and a reviewer sees what was accepted;
// the user adds why.
func ignoreReason(f checks.Finding) string { return "accepted here: " + f.Message }

// codeActions offers, for each rule with a finding on the requested
// lines, to add an x-idemlint-ignore entry for it.
func (s *server) codeActions(p codeActionParams) any {
	actions := []any{}
	path, ok := pathOf(p.TextDocument.URI)
	if !ok {
		return actions
	}
	text, ok := s.textOf(path)
	if !ok {
		return actions
	}
	seen := map[string]bool{}
	for _, f := range s.findings[path] {
		line := f.Line - 1
		if line < p.Range.Start.Line || line > p.Range.End.Line || seen[f.Rule] || !suppressible(f.Rule) {
			continue
		}
		seen[f.Rule] = true
		edit, ok := ignoreEdit(text, s.encoding, f.Rule, ignoreReason(f))
		if !ok {
			continue
		}
		var diags []diagnostic
		for _, d := range p.Context.Diagnostics {
			if d.Code == f.Rule {
				diags = append(diags, d)
			}
		}
		actions = append(actions, map[string]any{
			"title":       fmt.Sprintf("Ignore %s in this file (x-idemlint-ignore)", f.Rule),
			"kind":        "quickfix",
			"diagnostics": diags,
			"edit":        map[string]any{"changes": map[string]any{p.TextDocument.URI: []any{edit}}},
		})
	}
	return actions
}

// suppressible tells the rules an x-idemlint-ignore entry may name.
func suppressible(rule string) bool { return rule != "IDL001" && rule != "IDL003" }

// textOf is the text of path as the editor has it.
func (s *server) textOf(path string) (string, bool) {
	if b := s.open[path]; b != nil {
		return b.text, true
	}
	src, err := fileset.Read(path)
	return string(src), err == nil
}

type textEdit struct {
	Range   textRange `json:"range"`
	NewText string    `json:"newText"`
}

// jsonString is s as a JSON string, "<", ">" and "&" as they are (a
// message's "a -> b" stays readable).
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// ignoreEdit inserts an entry for rule, with reason, into the document's
// x-idemlint-ignore array, first, or adds the array as the document's
// first member; false when the document is not an object or already has
// an entry for the rule.
func ignoreEdit(text, encoding, rule, reason string) (textEdit, bool) {
	root, _ := jsontree.Parse(text)
	if root == nil || root.Kind != jsontree.Object {
		return textEdit{}, false
	}
	entry := fmt.Sprintf(`{"rule": %s, "reason": %s}`, jsonString(rule), jsonString(reason))
	insert := func(offset int, newText string) (textEdit, bool) {
		pos := atOffset(text, encoding, offset)
		return textEdit{Range: textRange{Start: pos, End: pos}, NewText: newText}, true
	}
	list := root.Get("x-idemlint-ignore")
	switch {
	case list == nil:
		indent := "  "
		if len(root.Members) > 0 {
			indent = indentAt(text, root.Members[0].KeyOffset)
		}
		member := "\n" + indent + `"x-idemlint-ignore": [` + entry + "]"
		if len(root.Members) > 0 {
			member += ","
		}
		return insert(root.Offset+1, member)
	case list.Kind != jsontree.Array:
		return textEdit{}, false
	case len(list.Items) == 0:
		return insert(list.Offset+1, entry)
	}
	for _, it := range list.Items {
		if r := it.Get("rule"); r != nil && r.Kind == jsontree.String && r.Text == rule {
			return textEdit{}, false
		}
	}
	first := list.Items[0].Offset
	separator := ", "
	if indent := indentAt(text, first); indent != "" {
		separator = ",\n" + indent
	}
	return insert(first, entry+separator)
}

// indentAt is the white space before offset on its line, when only white
// space precedes it there.
func indentAt(text string, offset int) string {
	start := strings.LastIndexByte(text[:offset], '\n') + 1
	if strings.TrimLeft(text[start:offset], " \t") != "" {
		return ""
	}
	return text[start:offset]
}

// pathOf is the absolute, clean file path of a file: URI.
func pathOf(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", false
	}
	path := filepath.FromSlash(u.Path)
	if len(path) >= 3 && path[0] == '\\' && path[2] == ':' {
		path = path[1:] // file:///C:/x on Windows
	}
	return filepath.Clean(path), true
}

// uriOf is the file: URI of an absolute path.
func uriOf(path string) string {
	slashed := filepath.ToSlash(path)
	if !strings.HasPrefix(slashed, "/") {
		slashed = "/" + slashed
	}
	return (&url.URL{Scheme: "file", Path: slashed}).String()
}
