package conform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func is2xx(status int) bool { return status >= 200 && status < 300 }

// summary describes an answer in a few words: its status and error_code,
// or the start of its body, or why there was none.
func (r *response) summary() string {
	if r.err != nil {
		return r.err.Error()
	}
	s := strconv.Itoa(r.status)
	if text := http.StatusText(r.status); text != "" {
		s += " " + text
	}
	switch code, ok := errorCode(r.body); {
	case ok:
		return s + fmt.Sprintf(", error_code %q", code)
	case len(r.body) > 0:
		return s + ", body " + preview(r.body)
	}
	return s + ", empty body"
}

// preview returns the start of a body as one printable line: as it is
// when it is printable text, quoted otherwise.
func preview(b []byte) string {
	const max = 96
	cut := b
	if len(b) > max {
		cut = b[:max]
		for len(cut) > max-utf8.UTFMax && !utf8.Valid(cut) {
			cut = cut[:len(cut)-1] // do not split a character
		}
	}
	s := string(cut)
	if !printable(s) {
		s = strconv.QuoteToGraphic(s)
	}
	if len(cut) < len(b) {
		s += fmt.Sprintf("... (%d bytes)", len(b))
	}
	return s
}

func printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) })
}

// jsonObject decodes body when it is exactly one JSON object.
func jsonObject(body []byte) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if dec.Decode(&obj) != nil || obj == nil || dec.Decode(new(json.RawMessage)) != io.EOF {
		return nil, false
	}
	return obj, true
}

// errorCode returns the error_code member of a JSON object body.
func errorCode(body []byte) (string, bool) {
	obj, ok := jsonObject(body)
	if !ok {
		return "", false
	}
	var code string
	if json.Unmarshal(obj["error_code"], &code) != nil {
		return "", false
	}
	return code, true
}

// resourceID returns the "id" member of a JSON object body, a string or a
// number, or "".
func resourceID(body []byte) string {
	obj, ok := jsonObject(body)
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(obj["id"], &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(obj["id"], &n) == nil {
		return n.String()
	}
	return ""
}

// maxDiffLines bounds a diff in the output; the bodies may be a megabyte.
const maxDiffLines = 40

// bodyDiff shows how body b differs from body a: a diff of the decoded
// JSON when both are JSON, of their lines otherwise. The first line names
// the sides.
func bodyDiff(a, b []byte, aName, bName string) string {
	var d string
	va, okA := decodeJSON(a)
	vb, okB := decodeJSON(b)
	if okA && okB {
		d = cmp.Diff(va, vb)
	} else {
		d = cmp.Diff(strings.Split(string(a), "\n"), strings.Split(string(b), "\n"))
	}
	if d == "" {
		// Equal values spelt differently: say so rather than show nothing.
		d = "the same JSON value, spelt differently:\n-" + preview(a) + "\n+" + preview(b) + "\n"
	}
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	if len(lines) > maxDiffLines {
		lines = append(lines[:maxDiffLines], fmt.Sprintf("... (%d more lines)", len(lines)-maxDiffLines))
	}
	return fmt.Sprintf("(-%s +%s)\n%s", aName, bName, strings.Join(lines, "\n"))
}

// decodeJSON decodes one JSON value, numbers kept as written.
func decodeJSON(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.Decode(new(json.RawMessage)) != io.EOF {
		return nil, false
	}
	return v, true
}

// tally counts answers by status, "201 x1, 409 x15", with the errors.
func tally(resps []*response) string {
	counts := map[string]int{}
	for _, r := range resps {
		k := "no answer"
		if r.err == nil {
			k = strconv.Itoa(r.status)
		}
		counts[k]++
	}
	keys := slices.Sorted(maps.Keys(counts))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s x%d", k, counts[k])
	}
	return strings.Join(parts, ", ")
}
