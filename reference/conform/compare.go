package conform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/idemlint/idemlint/schemas/jsontree"
)

func is2xx(status int) bool { return status >= 200 && status < 300 }

// previewBytes is how much of a body an answer's summary shows.
const previewBytes = 64

// summary describes an answer in a few words: its status and error_code,
// or the start of its body, or why there was none.
func (r *response) summary() string {
	s := r.headline()
	if _, coded := errorCode(r.body); r.err != nil || coded {
		return s
	}
	if len(r.body) > 0 {
		return s + ", body " + preview(r.body, r.redact, previewBytes)
	}
	return s + ", empty body"
}

// headline is the status of an answer and its error_code, or why there
// was none.
func (r *response) headline() string {
	if r.err != nil {
		return r.redact.text(r.err.Error())
	}
	s := strconv.Itoa(r.status)
	if text := http.StatusText(r.status); text != "" {
		s += " " + text
	}
	if code, ok := errorCode(r.body); ok {
		s += ", error_code " + r.redact.text(strconv.Quote(code))
	}
	return s
}

// preview returns the start of a body as one printable line of at most
// width characters: as it is when it is printable text, quoted otherwise.
// Secrets are redacted before it is cut or quoted.
func preview(b []byte, red *redactor, width int) string {
	cut, more := red.prefix(b, width)
	s := string(cut)
	if !printable(s) {
		s = strconv.QuoteToGraphic(s)
	}
	if more || utf8.RuneCountInString(s) > width {
		suffix := fmt.Sprintf("... (%d bytes)", len(b))
		s = cutRunes(s, max(width-len(suffix), 0)) + suffix
	}
	return s
}

// cutRunes returns the first n characters of s.
func cutRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
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

// codeElsewhere finds where a body that lacks the right error_code keeps
// its code: the JSON Pointer of a string member equal to want (any member
// named like a code when want is ""), other than /error_code; "" when
// there is none.
func codeElsewhere(body []byte, want string) string {
	v, ok := decodeJSON(body)
	if !ok {
		return ""
	}
	var found string
	var walk func(v any, ptr string, depth int)
	walk = func(v any, ptr string, depth int) {
		obj, ok := v.(map[string]any)
		if !ok || depth > 3 || found != "" {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			p := ptr + "/" + jsontree.EscapePointer(k)
			s, isString := obj[k].(string)
			switch {
			case p == "/error_code":
			case isString && (s == want || want == "" && looksLikeCode(k)):
				found = p
				return
			default:
				walk(obj[k], p, depth+1)
			}
		}
	}
	walk(v, "", 0)
	return found
}

func looksLikeCode(name string) bool {
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
	return n == "code" || n == "errorcode" || n == "type"
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

// tally counts answers by status, "201 x1, 409 x15", and those that came
// to nothing.
func tally(resps []*response) string {
	counts := map[string]int{}
	for _, r := range resps {
		k := strconv.Itoa(r.status)
		switch {
		case errors.Is(r.err, errNoAnswer):
			k = "no answer"
		case r.err != nil:
			k = "unreadable answer" // over the size limit, or cut short
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
