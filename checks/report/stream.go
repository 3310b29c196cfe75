package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
)

// jsonAt writes JSON values one at a time, laid out exactly as
// encoding/json's SetIndent("", "  ") lays them out at one depth of a
// larger document, so that a report is written finding by finding and
// never held whole in memory.
type jsonAt struct {
	w      *bufio.Writer
	indent string // the depth's indentation: two spaces a level
	buf    bytes.Buffer
	enc    *json.Encoder
}

func newJSONAt(w *bufio.Writer, depth int) *jsonAt {
	j := &jsonAt{w: w, indent: strings.Repeat("  ", depth)}
	j.enc = json.NewEncoder(&j.buf)
	j.enc.SetIndent(j.indent, "  ")
	j.enc.SetEscapeHTML(false)
	return j
}

// value writes v where the line already stands (after a key, or after the
// indentation of an array item).
func (j *jsonAt) value(v any) error {
	j.buf.Reset()
	if err := j.enc.Encode(v); err != nil {
		return err
	}
	_, err := j.w.Write(bytes.TrimSuffix(j.buf.Bytes(), []byte("\n")))
	return err
}

// items writes an array of n values, elem(i) each, at j's depth: the
// opening bracket where the line stands, "[]" when n is 0.
func (j *jsonAt) items(n int, elem func(i int) (any, error)) error {
	if n == 0 {
		_, err := j.w.WriteString("[]")
		return err
	}
	j.w.WriteString("[\n")
	for i := range n {
		if i > 0 {
			j.w.WriteString(",\n")
		}
		v, err := elem(i)
		if err != nil {
			return err
		}
		j.w.WriteString(j.indent)
		if err := j.value(v); err != nil {
			return err
		}
	}
	_, err := j.w.WriteString("\n" + j.indent[2:] + "]")
	return err
}
