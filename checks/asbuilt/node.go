package asbuilt

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// reader reads the fields idemlint knows out of the YAML nodes of one
// file, keeping each value's position.
//
// YAML aliases let a file of a few hundred bytes describe a tree of
// billions of nodes. The loader never expands them (nodes share the
// anchored node), and the reader pays for each node it visits from a
// budget proportional to the file's size, so reading stays linear in the
// input whatever the aliases; a file that exhausts it is refused.
type reader struct {
	file     string
	budget   int
	exceeded bool
	problems []Problem
	// lineOffset is the line of the file before the document being read
	// (each document is parsed on its own).
	lineOffset int
	// shift, when set, maps a node's line and column into the file, for
	// YAML read out of a string of the file (the mesh configuration in a
	// ConfigMap).
	shift func(line, col int) (int, int)
}

// Problem is a value that is written but cannot be understood (a number
// that is not one, a tag idemlint does not read): the resource is read
// without it, and the checks report it at At.
type Problem struct {
	At      Pos
	Message string
	// Used, when set, is the resource used instead of the one at At (its
	// first definition): the whole resource at At is not used, not one of
	// its values.
	Used *Pos
}

// visitsPerByte bounds the nodes a file's reading may visit: a node
// costs several bytes of YAML, and reading visits each a few times.
const visitsPerByte = 4

func newReader(file string, size int) *reader {
	return &reader{file: file, budget: visitsPerByte*size + 1024}
}

func (r *reader) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: r.file}
	}
	line, col := n.Line+r.lineOffset, n.Column
	if r.shift != nil {
		line, col = r.shift(n.Line, n.Column)
	}
	return Pos{File: r.file, Line: line, Column: col}
}

func (r *reader) problem(n *yaml.Node, format string, args ...any) {
	r.problems = append(r.problems, Problem{At: r.pos(n), Message: fmt.Sprintf(format, args...)})
}

// visit pays for one node and follows it if it is an alias; nil once the
// budget is spent.
func (r *reader) visit(n *yaml.Node) *yaml.Node {
	for n != nil && !r.exceeded {
		r.budget--
		if r.budget < 0 {
			r.exceeded = true
			return nil
		}
		if n.Kind != yaml.AliasNode {
			return n
		}
		n = n.Alias
	}
	return nil
}

// field returns the value of key in the mapping m (merge keys "<<"
// included), or nil.
func (r *reader) field(m *yaml.Node, key string) *yaml.Node {
	m = r.visit(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := r.visit(m.Content[i])
		if k == nil {
			return nil
		}
		switch {
		case k.Kind == yaml.ScalarNode && k.Tag == "!!merge":
			merges = append(merges, m.Content[i+1])
		case k.Kind == yaml.ScalarNode && k.Value == key:
			return m.Content[i+1]
		}
	}
	for _, merged := range merges {
		merged = r.visit(merged)
		if merged == nil {
			return nil
		}
		sources := []*yaml.Node{merged}
		if merged.Kind == yaml.SequenceNode {
			sources = merged.Content
		}
		for _, s := range sources {
			if v := r.field(s, key); v != nil {
				return v
			}
		}
	}
	return nil
}

// path follows keys from n.
func (r *reader) path(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n = r.field(n, k); n == nil {
			return nil
		}
	}
	return n
}

// items returns the elements of a sequence, as written (aliases are
// followed when they are read); a value that is not a
// sequence (and not null) is a problem.
func (r *reader) items(n *yaml.Node, what string) []*yaml.Node {
	written := n
	n = r.visit(n)
	if n == nil || isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.problem(written, "%s is not a list", what)
		return nil
	}
	out := make([]*yaml.Node, 0, len(n.Content))
	for _, c := range n.Content {
		if r.visit(c) == nil {
			break
		}
		out = append(out, c) // as written: an alias is placed where it is used
	}
	return out
}

// pairs returns the keys and values (as written) of a mapping, in order.
func (r *reader) pairs(n *yaml.Node, what string) (keys, values []*yaml.Node) {
	written := n
	n = r.visit(n)
	if n == nil || isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		r.problem(written, "%s is not a mapping", what)
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := r.visit(n.Content[i]), n.Content[i+1]
		if k == nil || r.visit(v) == nil {
			break
		}
		keys, values = append(keys, k), append(values, v)
	}
	return keys, values
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// plainTags are the tags of values idemlint reads as text: a value
// tagged !!binary, !!timestamp or with an application's own tag (!ref)
// is not the plain string a proxy reads, and is reported instead.
var plainTags = map[string]bool{"!!str": true, "!!int": true, "!!bool": true, "!!float": true}

// text returns a scalar's value as written; false, with a problem, for
// anything else. A null is absent.
func (r *reader) text(n *yaml.Node, what string) (Text, bool) {
	written := n // an alias is reported where it is used
	n = r.visit(n)
	if n == nil || isNull(n) {
		return Text{}, false
	}
	if n.Kind != yaml.ScalarNode {
		r.problem(written, "%s is not a single value", what)
		return Text{}, false
	}
	if !plainTags[n.Tag] {
		r.problem(written, "%s has the tag %s; idemlint reads only plain strings, numbers and booleans here", what, n.Tag)
		return Text{}, false
	}
	return Text{Value: n.Value, At: r.pos(written)}, true
}

// texts returns a list of scalars; a single scalar is refused.
func (r *reader) texts(n *yaml.Node, what string) []Text {
	var out []Text
	for _, item := range r.items(n, what) {
		if t, ok := r.text(item, what+" entry"); ok {
			out = append(out, t)
		}
	}
	return out
}

// boolean reads true or false (written as a boolean or a string).
func (r *reader) boolean(n *yaml.Node, what string) (bool, Pos, bool) {
	t, ok := r.text(n, what)
	if !ok {
		return false, Pos{}, false
	}
	v, err := strconv.ParseBool(strings.TrimSpace(t.Value))
	if err != nil {
		r.problem(n, "%s is %q, not true or false", what, t.Value)
		return false, Pos{}, false
	}
	return v, t.At, true
}

// fingerprint hashes what the document n says, not how it is written
// (style, comments, positions, anchors): two copies of one resource, a
// chart rendered twice or a List's item beside its own file, hash
// alike, and a copy that differs does not. An anchored node is hashed
// once (its aliases reuse the hash), so an alias bomb costs its size.
func fingerprint(n *yaml.Node) uint64 {
	var anchored map[*yaml.Node]uint64
	var hash func(n *yaml.Node) uint64
	hash = func(n *yaml.Node) uint64 {
		for n != nil && n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		if n == nil {
			return 0
		}
		if n.Anchor != "" {
			if h, ok := anchored[n]; ok {
				return h
			}
			if anchored == nil {
				anchored = map[*yaml.Node]uint64{}
			}
			anchored[n] = 0 // an anchor inside itself
		}
		// A Hash value, not hash.Hash: it stays on the stack.
		var h maphash.Hash
		h.SetSeed(fingerprintSeed)
		h.WriteByte(byte(n.Kind))
		var word [8]byte
		if n.Kind == yaml.ScalarNode {
			h.WriteString(n.ShortTag())
			h.Write(binary.LittleEndian.AppendUint64(word[:0], uint64(len(n.Value))))
			h.WriteString(n.Value)
		}
		for _, c := range n.Content {
			h.Write(binary.LittleEndian.AppendUint64(word[:0], hash(c)))
		}
		sum := h.Sum64()
		if n.Anchor != "" {
			anchored[n] = sum
		}
		return sum
	}
	return hash(n)
}

// fingerprintSeed seeds every fingerprint of the process: fingerprints
// are compared within one run only, never stored or printed.
var fingerprintSeed = maphash.MakeSeed()
