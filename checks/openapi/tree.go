package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
	"go.yaml.in/yaml/v4/plugin/loaderlimits"

	"github.com/idemlint/idemlint/schemas/jsontree"
)

// maxDepth bounds the nesting of a YAML description, as jsontree bounds
// JSON's, so hostile input cannot exhaust the stack.
const maxDepth = jsontree.MaxDepth

// source is one parsed file of a description: JSON through jsontree, which
// is strict (no duplicate keys) and cheaper than a YAML parser
// on JSON, and YAML through go.yaml.in/yaml. Only the parts idemlint reads
// are ever visited, so a description's schemas cost their parsing and
// nothing else.
type source struct {
	name string // the file as named by the user, or as a $ref reached it
	abs  string // the file's absolute path
	root node
	pos  *jsontree.Position // JSON: offsets to lines and columns
}

// node is a value of a source: exactly one of y and j is set (the zero
// node is "absent"). It reads both trees through one interface, with no
// copy of either.
type node struct {
	y   *yaml.Node
	j   *jsontree.Node
	src *source
}

// syntaxError is a file that is not valid YAML or JSON, at a place when
// the parser says one (Line > 0).
type syntaxError struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *syntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// parseSource parses data, the file name.
func parseSource(name string, data []byte) (*source, error) {
	s := &source{name: name}
	if bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
		root, problems := jsontree.Parse(string(data))
		if len(problems) > 0 {
			pr := problems[0]
			return nil, &syntaxError{name, pr.Line, pr.Column, "not valid JSON: " + pr.Message}
		}
		s.root, s.pos = node{j: root, src: s}, jsontree.NewPosition(string(data))
		return s, nil
	}
	loader, err := yaml.NewLoader(bytes.NewReader(data), yaml.WithPlugin(loaderlimits.New(loaderlimits.DepthValue(maxDepth))))
	if err != nil {
		return nil, yamlError(name, err)
	}
	var doc yaml.Node
	if err := loader.Load(&doc); err != nil {
		return nil, yamlError(name, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	// A parser that decodes into maps refuses a key written twice; the
	// tree keeps both, and the reader would take the first. Refused here,
	// as in JSON.
	if dup := duplicateKey(root, 0); dup != nil {
		return nil, &syntaxError{name, dup.Line, dup.Column, fmt.Sprintf("not valid YAML: duplicate key %q", dup.Value)}
	}
	s.root = node{y: root, src: s}
	return s, nil
}

// duplicateKey is the second of two equal keys of a mapping under y, nil
// when there is none. Small mappings, most of a description, are
// scanned; larger ones use a set.
func duplicateKey(y *yaml.Node, depth int) *yaml.Node {
	if depth > maxDepth {
		return nil
	}
	switch y.Kind {
	case yaml.MappingNode:
		n := len(y.Content) / 2
		var seen map[string]bool
		if n > 16 {
			seen = make(map[string]bool, n)
		}
		for i := 0; i+1 < len(y.Content); i += 2 {
			k := y.Content[i]
			if seen != nil {
				if seen[k.Value] {
					return k
				}
				seen[k.Value] = true
			} else {
				for j := 0; j < i; j += 2 {
					if y.Content[j].Value == k.Value {
						return k
					}
				}
			}
			if dup := duplicateKey(y.Content[i+1], depth+1); dup != nil {
				return dup
			}
		}
	case yaml.SequenceNode:
		for _, it := range y.Content {
			if dup := duplicateKey(it, depth+1); dup != nil {
				return dup
			}
		}
	}
	return nil
}

// yamlError says where the YAML of the file name is broken.
func yamlError(name string, err error) error {
	var le *yaml.LoadError
	if errors.As(err, &le) {
		msg := le.Message
		if le.ContextMsg != "" {
			msg = le.ContextMsg + ": " + msg
		}
		return &syntaxError{name, le.Mark.Line, le.Mark.Column, "not valid YAML or JSON: " + msg}
	}
	return &syntaxError{File: name, Msg: "not valid YAML or JSON: " + err.Error()}
}

// ok reports whether the node exists.
func (n node) ok() bool { return n.y != nil || n.j != nil }

// yml is the YAML node itself, an alias followed.
func (n node) yml() *yaml.Node {
	y := n.y
	for i := 0; y != nil && y.Kind == yaml.AliasNode && i < 10; i++ {
		y = y.Alias
	}
	return y
}

// isMap reports whether the node is a mapping (an object).
func (n node) isMap() bool {
	if n.j != nil {
		return n.j.Kind == jsontree.Object
	}
	y := n.yml()
	return y != nil && y.Kind == yaml.MappingNode
}

// keyAt is where a key of a mapping is written (jsontree keeps an
// offset, not a node, for a key).
type keyAt struct {
	y   *yaml.Node
	off int
	src *source
}

func (k keyAt) at() Location {
	if k.y != nil {
		return node{y: k.y, src: k.src}.at()
	}
	if k.src == nil {
		return Location{}
	}
	line, col := k.src.pos.At(k.off)
	return Location{File: k.src.name, Line: line, Column: col}
}

// members calls f with each key of a mapping, where the key is written
// and its value, in source order, until f returns false.
func (n node) members(f func(key string, at keyAt, value node) bool) {
	if n.j != nil {
		if n.j.Kind != jsontree.Object {
			return
		}
		for i := range n.j.Members {
			m := &n.j.Members[i]
			if !f(m.Key, keyAt{off: m.KeyOffset, src: n.src}, node{j: m.Value, src: n.src}) {
				return
			}
		}
		return
	}
	y := n.yml()
	if y == nil || y.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(y.Content); i += 2 {
		if !f(y.Content[i].Value, keyAt{y: y.Content[i], src: n.src}, node{y: y.Content[i+1], src: n.src}) {
			return
		}
	}
}

// get returns the value of key in a mapping, and where the key is.
func (n node) get(key string) (value node, at keyAt) {
	if n.j != nil {
		if n.j.Kind != jsontree.Object {
			return node{}, keyAt{}
		}
		for i := range n.j.Members {
			if m := &n.j.Members[i]; m.Key == key {
				return node{j: m.Value, src: n.src}, keyAt{off: m.KeyOffset, src: n.src}
			}
		}
		return node{}, keyAt{}
	}
	if y := n.yml(); y != nil && y.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(y.Content); i += 2 {
			if y.Content[i].Value == key {
				return node{y: y.Content[i+1], src: n.src}, keyAt{y: y.Content[i], src: n.src}
			}
		}
	}
	return node{}, keyAt{}
}

// val is get without the key.
func (n node) val(key string) node {
	v, _ := n.get(key)
	return v
}

// items are the elements of a sequence (an array).
func (n node) items() []node {
	var out []node
	if n.j != nil {
		for _, it := range n.j.Items {
			out = append(out, node{j: it, src: n.src})
		}
		return out
	}
	if y := n.yml(); y != nil && y.Kind == yaml.SequenceNode {
		for _, it := range y.Content {
			out = append(out, node{y: it, src: n.src})
		}
	}
	return out
}

// str is a scalar's text ("" for anything else); a JSON number or
// boolean gives its literal.
func (n node) str() string {
	if n.j != nil {
		switch n.j.Kind {
		case jsontree.String, jsontree.Number:
			return n.j.Text
		case jsontree.Bool:
			return strconv.FormatBool(n.j.True)
		}
		return ""
	}
	if y := n.yml(); y != nil && y.Kind == yaml.ScalarNode {
		return y.Value
	}
	return ""
}

// truth is a boolean scalar's value.
func (n node) truth() bool {
	if n.j != nil {
		return n.j.Kind == jsontree.Bool && n.j.True
	}
	y := n.yml()
	return y != nil && y.Kind == yaml.ScalarNode && y.ShortTag() == "!!bool" && strings.EqualFold(y.Value, "true")
}

// at is where the node is written.
func (n node) at() Location {
	if n.j != nil {
		line, col := n.src.pos.At(n.j.Offset)
		return Location{File: n.src.name, Line: line, Column: col}
	}
	if n.y != nil {
		return Location{File: n.src.name, Line: n.y.Line, Column: n.y.Column}
	}
	return Location{File: n.src.name, Line: 1, Column: 1}
}

// decode is the node as a Go value that encoding/json writes back: maps,
// slices, strings, numbers, booleans and nil.
func (n node) decode() (any, error) {
	if n.j != nil {
		return jsonValue(n.j), nil
	}
	var v any
	if y := n.yml(); y != nil {
		if err := y.Decode(&v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// jsonValue is the Go value of a jsontree node.
func jsonValue(j *jsontree.Node) any {
	switch j.Kind {
	case jsontree.Bool:
		return j.True
	case jsontree.Number:
		return json.Number(j.Text) // as written: no precision lost
	case jsontree.String:
		return j.Text
	case jsontree.Array:
		out := make([]any, len(j.Items))
		for i, it := range j.Items {
			out[i] = jsonValue(it)
		}
		return out
	case jsontree.Object:
		out := make(map[string]any, len(j.Members))
		for _, m := range j.Members {
			out[m.Key] = jsonValue(m.Value)
		}
		return out
	}
	return nil
}

// walkRefs calls f with every "$ref" string of the tree under n and the
// node of its value, in source order. YAML aliases are not followed: what
// they name is walked where it is defined.
func (n node) walkRefs(f func(ref string, at node)) {
	if n.j != nil {
		walkJSONRefs(n.j, n.src, f)
		return
	}
	if n.y != nil {
		walkYAMLRefs(n.y, n.src, f, 0)
	}
}

func walkJSONRefs(j *jsontree.Node, src *source, f func(string, node)) {
	switch j.Kind {
	case jsontree.Object:
		for _, m := range j.Members {
			if m.Key == "$ref" && m.Value.Kind == jsontree.String {
				f(m.Value.Text, node{j: m.Value, src: src})
				continue
			}
			walkJSONRefs(m.Value, src, f)
		}
	case jsontree.Array:
		for _, it := range j.Items {
			walkJSONRefs(it, src, f)
		}
	}
}

func walkYAMLRefs(y *yaml.Node, src *source, f func(string, node), depth int) {
	if depth > maxDepth {
		return
	}
	switch y.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(y.Content); i += 2 {
			if v := y.Content[i+1]; y.Content[i].Value == "$ref" && v.Kind == yaml.ScalarNode {
				f(v.Value, node{y: v, src: src})
				continue
			}
			walkYAMLRefs(y.Content[i+1], src, f, depth+1)
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, it := range y.Content {
			walkYAMLRefs(it, src, f, depth+1)
		}
	}
}
