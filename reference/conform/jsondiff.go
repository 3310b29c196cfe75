package conform

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/idemlint/idemlint/schemas/jsontree"
)

// Our own diff of JSON values, rather than go-cmp's, whose authors call its
// output unstable and which shows Go types and characters ("s\"1\""):
// a reader wants which member changed and from what to what. Each
// difference is one line, "-/pointer: value" for the first body and
// "+/pointer: value" for the second, values as compact JSON; numbers
// compare by value (1.0 equals 1), strings by their decoded text.

// maxDiffLines bounds a diff in the output; the bodies may be a megabyte.
const maxDiffLines = 40

// diffWidth is the widest diff line: the text format indents a diff by 7.
const diffWidth = Width - 7

// bodyDiff shows how body b differs from body a. The first line names the
// sides; secrets are redacted in each line before it is cut to width.
func bodyDiff(a, b []byte, aName, bName string, red *redactor) string {
	var lines []string
	va, okA := decodeJSON(a)
	vb, okB := decodeJSON(b)
	say := "not both JSON:"
	if okA && okB {
		say = ""
		if jsonDiff(va, vb, "", &lines); len(lines) == 0 {
			say = "the same JSON value, spelt differently:"
		}
	}
	if say != "" {
		lines = []string{say, "-" + preview(a, red, diffWidth-1), "+" + preview(b, red, diffWidth-1)}
	}
	if len(lines) > maxDiffLines {
		lines = append(lines[:maxDiffLines], fmt.Sprintf("... (%d more lines)", len(lines)-maxDiffLines))
	}
	for i, l := range lines {
		lines[i] = fit(red.text(l), diffWidth)
	}
	return fmt.Sprintf("(-%s +%s)\n%s", aName, bName, strings.Join(lines, "\n"))
}

// jsonDiff appends the differences between a and b, found at ptr, to
// lines, stopping a little after maxDiffLines.
func jsonDiff(a, b any, ptr string, lines *[]string) {
	if len(*lines) > maxDiffLines {
		return
	}
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			keys := slices.Collect(maps.Keys(x))
			for k := range y {
				if _, ok := x[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				p := ptr + "/" + jsontree.EscapePointer(k)
				xv, inX := x[k]
				yv, inY := y[k]
				switch {
				case !inY:
					*lines = append(*lines, "-"+p+": "+render(xv))
				case !inX:
					*lines = append(*lines, "+"+p+": "+render(yv))
				default:
					jsonDiff(xv, yv, p, lines)
				}
			}
			return
		}
	case []any:
		if y, ok := b.([]any); ok {
			for i := range max(len(x), len(y)) {
				p := fmt.Sprintf("%s/%d", ptr, i)
				switch {
				case i >= len(y):
					*lines = append(*lines, "-"+p+": "+render(x[i]))
				case i >= len(x):
					*lines = append(*lines, "+"+p+": "+render(y[i]))
				default:
					jsonDiff(x[i], y[i], p, lines)
				}
			}
			return
		}
	}
	if !sameScalar(a, b) {
		where := ptr
		if where == "" {
			where = "(whole body)"
		}
		*lines = append(*lines, "-"+where+": "+render(a), "+"+where+": "+render(b))
	}
}

// sameScalar compares two JSON values that are not both objects or both
// arrays: numbers by value, the rest exactly.
func sameScalar(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		rx, okX := new(big.Rat).SetString(string(x))
		ry, okY := new(big.Rat).SetString(string(y))
		return okX && okY && rx.Cmp(ry) == 0 || x == y
	case map[string]any, []any:
		return false // b is not of the same kind
	}
	return a == b
}

// render writes a JSON value compactly, keys sorted, HTML left alone.
func render(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) //nolint:errcheck // decoded JSON always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
