package reference

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/idemlint/idemlint/reference/jcs"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// EffectsPath is where a Demo reports how often it really ran.
const EffectsPath = "/_effects"

// HealthPath is where a Demo answers that it is up, with its Warnings.
const HealthPath = "/_health"

// Demo is a stand-in business handler answering every operation a policy
// declares, at its method and path, so the engine can be tried end to end
// without the real service:
//
//   - a state-changing operation creates a resource and answers 201 with
//     {"id": "<fresh id>", "operation": "<operation_key>", "request": <body>}
//     (the body echoed as JSON, or as a string when it is not JSON);
//   - a read-only operation whose path ends with a parameter
//     (/orders/{id}) answers 200 with the resource of that id, or 404;
//     one without answers 200 with {"items": [...], "total": N}, a page of
//     the resources in creation order: ?offset= (default 0) and ?limit=
//     (default 100, at most 1000);
//   - GET /_effects answers {"count": N}: how many times an operation
//     really ran, replays excluded, which is what conform counts;
//   - GET /_health answers 200 {"status": "ok", "warnings": []}, or
//     "warn" with the Warnings (a store that can lose records), and the
//     engine's lease_lapses and takeovers when Leases is set;
//   - anything else is 404 problem+json.
//
// It keeps the last DemoKeeps resources in memory, and no more than
// DemoKeepsBytes of them, forgetting older ones, so that a long run (or
// one of large bodies) stays small, and is safe for concurrent use.
type Demo struct {
	// Delay is how long a state-changing operation takes, to try
	// concurrent duplicates and leases by hand; the operation gives up
	// with 503 when its context ends first.
	Delay time.Duration
	// Warnings are what /_health reports besides being up. Set them
	// before serving.
	Warnings []string
	// Leases, when set, adds the engine's LeaseStats to /_health.
	Leases func() LeaseStats

	router  *router
	ops     []boundary.Operation
	effects atomic.Int64

	mu        sync.Mutex
	resources map[string]json.RawMessage // by id
	order     []string                   // ids in creation order
	bytes     int64                      // of the resources kept
}

// DemoKeeps is how many resources a Demo remembers.
const DemoKeeps = 10000

// DemoKeepsBytes is how many bytes of resources a Demo remembers: ten
// thousand of 1.6 KiB, or 16 of the largest (a 1 MiB body echoed).
const DemoKeepsBytes = 16 << 20

// Page sizes of a Demo's list.
const (
	demoDefaultLimit = 100
	demoMaxLimit     = 1000
)

// NewDemo returns a demo handler for the operations of p.
func NewDemo(p *boundary.Policy) *Demo {
	return &Demo{router: newRouter(p.Operations.Items), ops: p.Operations.Items, resources: map[string]json.RawMessage{}}
}

// Effects returns how many times an operation really ran.
func (d *Demo) Effects() int64 { return d.effects.Load() }

func (d *Demo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == EffectsPath {
		writeJSON(w, http.StatusOK, []byte(`{"count":`+strconv.FormatInt(d.Effects(), 10)+`}`))
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == HealthPath {
		d.health(w)
		return
	}
	i := d.router.match(r.Method, r.URL.Path)
	if i < 0 {
		writeResponse(w, problem(http.StatusNotFound, "not_found", "the policy declares no operation "+r.Method+" "+r.URL.Path))
		return
	}
	d.effects.Add(1)
	op := d.ops[i]
	if op.StateChanging {
		d.create(w, r, op.Key.Value)
		return
	}
	if id, byID := d.router.lastParam(i, r.URL.Path); byID {
		d.mu.Lock()
		res, ok := d.resources[id]
		d.mu.Unlock()
		if !ok {
			writeResponse(w, problem(http.StatusNotFound, "not_found", "nothing was created with id "+id))
			return
		}
		writeJSON(w, http.StatusOK, res)
		return
	}
	d.list(w, r)
}

func (d *Demo) health(w http.ResponseWriter) {
	health := struct {
		Status   string   `json:"status"`
		Warnings []string `json:"warnings"`
		*LeaseStats
	}{"ok", d.Warnings, nil}
	if d.Leases != nil {
		stats := d.Leases()
		health.LeaseStats = &stats
	}
	if len(d.Warnings) > 0 {
		health.Status = "warn"
	} else {
		health.Warnings = []string{}
	}
	body, _ := json.Marshal(health) // cannot fail: strings
	writeJSON(w, http.StatusOK, body)
}

// list answers a page of the resources.
func (d *Demo) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, err1 := intParam(q.Get("offset"), 0)
	limit, err2 := intParam(q.Get("limit"), demoDefaultLimit)
	if err1 != nil || err2 != nil || limit < 1 || limit > demoMaxLimit {
		writeResponse(w, problem(http.StatusBadRequest, "bad_page", "offset must be an integer >= 0 and limit one from 1 to "+strconv.Itoa(demoMaxLimit)))
		return
	}
	d.mu.Lock()
	total := len(d.order)
	offset = min(offset, total)
	page := d.order[offset : offset+min(limit, total-offset)]
	items := make([]json.RawMessage, len(page))
	for j, id := range page {
		items[j] = d.resources[id]
	}
	d.mu.Unlock()
	// Cannot fail: RawMessages marshalled before.
	body, _ := json.Marshal(struct {
		Items []json.RawMessage `json:"items"`
		Total int               `json:"total"`
	}{items, total})
	writeJSON(w, http.StatusOK, body)
}

// intParam reads a non-negative query parameter, def when absent.
func intParam(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err == nil && n < 0 {
		err = errors.New("negative")
	}
	return n, err
}

func (d *Demo) create(w http.ResponseWriter, r *http.Request, opKey string) {
	// Sized for the announced length, so that a body is read into one
	// allocation (io.ReadAll starts at 512 bytes and grows), up to what
	// the engine takes for a body before any of it arrived.
	var buf bytes.Buffer
	buf.Grow(int(min(max(r.ContentLength, 0), bodyFirstChunk)) + bytes.MinRead)
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, DefaultMaxBodyBytes))
	body := buf.Bytes()
	if err != nil {
		writeResponse(w, problem(http.StatusBadRequest, CodeBodyUnreadable, "the request body could not be read: "+err.Error()))
		return
	}
	if d.Delay > 0 {
		t := time.NewTimer(d.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			writeResponse(w, problem(http.StatusServiceUnavailable, "shutting_down", "the operation was cut short"))
			return
		}
	}
	id := rand.Text()
	res := createdJSON(id, opKey, body)
	d.mu.Lock()
	d.resources[id] = res
	d.order = append(d.order, id)
	d.bytes += int64(len(res))
	for len(d.order) > DemoKeeps || d.bytes > DemoKeepsBytes && len(d.order) > 1 {
		d.bytes -= int64(len(d.resources[d.order[0]]))
		delete(d.resources, d.order[0])
		d.order = d.order[1:] // append copies the live part when it grows
	}
	d.mu.Unlock()
	writeJSON(w, http.StatusCreated, res)
}

// createdJSON is what json.Marshal makes of
//
//	struct {
//		ID        string `json:"id"`
//		Operation string `json:"operation"`
//		Request   any    `json:"request"`
//	}
//
// with Request nil for an empty body, the body as a json.RawMessage when
// it is JSON, else as a string. json.Compact (or json.Valid) runs every
// byte through a scanner, most of the demo's cost (docs/performance.md,
// The demo's answer): a body is known to be JSON when our faster
// canonicaliser accepts it (it accepts only I-JSON, a part of JSON), and only a
// body it refuses goes through json.Valid. A valid body then has its
// whitespace cut between strings (appendCompact) and HTML escaped only
// where there is some.
func createdJSON(id, opKey string, body []byte) []byte {
	res := make([]byte, 0, len(body)+len(id)+len(opKey)+48)
	res = append(res, `{"id":`...)
	res = appendJSONString(res, id)
	res = append(res, `,"operation":`...)
	res = appendJSONString(res, opKey)
	res = append(res, `,"request":`...)
	switch {
	case len(body) == 0:
		res = append(res, "null"...)
	case isJSON(body):
		start := len(res)
		res = appendCompact(res, body)
		if needsHTMLEscape(res[start:]) {
			// Marshal escapes HTML in a RawMessage as it compacts it.
			var escaped bytes.Buffer
			json.HTMLEscape(&escaped, res[start:])
			res = append(res[:start], escaped.Bytes()...)
		}
	default:
		res = appendJSONString(res, string(body))
	}
	return append(res, '}')
}

// isJSON reports whether body is valid JSON, as json.Valid does.
func isJSON(body []byte) bool {
	scratch := getBuffer()
	defer putBuffer(scratch)
	var err error
	if *scratch, err = jcs.AppendExactWithout((*scratch)[:0], body, nil); err == nil {
		return true
	}
	return json.Valid(body)
}

// appendCompact appends src, valid JSON, without the whitespace between
// its tokens, as json.Compact does.
func appendCompact(dst, src []byte) []byte {
	for len(src) > 0 {
		// Up to the next string or whitespace, then past it.
		i := bytes.IndexAny(src, "\" \t\n\r")
		if i < 0 {
			return append(dst, src...)
		}
		dst = append(dst, src[:i]...)
		if src[i] != '"' {
			src = src[i+1:]
			continue
		}
		end := stringEnd(src[i+1:]) + i + 1
		dst = append(dst, src[i:end+1]...)
		src = src[end+1:]
	}
	return dst
}

// stringEnd returns the index of the quote that ends the valid JSON
// string whose content s starts with.
func stringEnd(s []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(s[i:], '"') + i
		if k := bytes.IndexByte(s[i:j], '\\'); k >= 0 {
			i += k + 2 // an escape: its next byte never ends the string
			continue
		}
		return j
	}
}

// needsHTMLEscape reports whether json.HTMLEscape would change b.
func needsHTMLEscape(b []byte) bool {
	return bytes.ContainsAny(b, "<>&") || bytes.Contains(b, []byte("\u2028")) || bytes.Contains(b, []byte("\u2029"))
}

// appendJSONString appends s as json.Marshal writes it; a string of
// letters, digits and punctuation Marshal leaves alone (an id, an
// operation key) is quoted as it is, without Marshal's reflection.
func appendJSONString(dst []byte, s string) []byte {
	plain := true
	for i := range len(s) {
		if c := s[i]; c < ' ' || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			plain = false
			break
		}
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	enc, _ := json.Marshal(s) // cannot fail: a string
	return append(dst, enc...)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client went away; nothing to do
}

// writeResponse sends resp as it is. Its header values are handed over
// without their spare capacity: a stored response's values are shared by
// every replay, so a writer that then adds to one of those headers must
// copy it rather than write into the record.
func writeResponse(w http.ResponseWriter, resp Response) {
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = v[:len(v):len(v)]
	}
	w.WriteHeader(resp.Status)
	w.Write(resp.Body) //nolint:errcheck // the client went away; nothing to do
}
