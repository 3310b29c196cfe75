package asbuilt

import (
	"bytes"
	"slices"
	"strings"
)

// Triage: most documents of a platform team's manifests are Deployments,
// Services, ConfigMaps and the like, which no reader reads, and parsing
// one (the YAML library builds a node for every value) costs far more
// than the rest of reading it. A document's kind is decided from its
// text when that is sure, and by the full parse otherwise.

// verdict is what the text of a document says before it is parsed.
type verdict int

const (
	parseIt  verdict = iota // a kind a reader reads, or not sure: parse it
	skipIt                  // a kind no reader reads: skipped and counted
	emptyDoc                // no content: neither read nor counted
)

// triage decides from a document's top level alone (and returns the kind
// it read, nil when none), when that is plain
// block style: every line at column 0 is a "key: value" with a plain key
// (or an item of the sequence the key above holds), and kind is written
// once, as a plain single-line word (apiVersion too, when written). The
// keys of a block mapping at the root are exactly its lines at column 0,
// so the kind read there is the parser's. Any other shape (flow style,
// JSON, quotes, anchors, aliases, tags, merge keys, an indented or
// non-mapping root) goes to the full parse, as do the kinds read, whatever
// their apiVersion (one written wrongly is the file's error, IDL001), API
// Gateway exports, the ConfigMaps a reader may read, and a document with
// a line break other than "\n" or "\r\n". FuzzTriage holds it to the
// full parse.
func triage(doc []byte) (verdict, []byte) {
	if slices.ContainsFunc(otherBreaks, func(b []byte) bool { return bytes.Contains(doc, b) }) {
		return parseIt, nil // lines this reading does not split at
	}
	var kind []byte
	var hasKind, content, sequence bool
	// continued: the last key was kind or apiVersion, whose plain value
	// would go on in the indented lines below it.
	continued := false
	first := true
	for line := range bytes.Lines(doc) {
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if bytes.IndexByte(line, '\r') >= 0 {
			return parseIt, kind // a line break too
		}
		if first {
			first = false
			if marker(line, "---") || marker(line, "...") {
				if rest := bytes.TrimSpace(line[3:]); len(rest) > 0 && rest[0] != '#' {
					return parseIt, kind // content on the marker's line
				}
				continue
			}
		}
		trimmed := bytes.TrimLeft(line, " \t")
		indented := len(trimmed) < len(line)
		switch {
		case len(trimmed) == 0:
			continue
		case indented && continued:
			return parseIt, kind // "kind: Virtual\n  Service" is one value
		case trimmed[0] == '#':
			continue
		case indented && !content:
			return parseIt, kind // an indented root
		case indented:
			continue // the value of the key above
		}
		continued = false
		if line[0] == '-' && (len(line) == 1 || line[1] == ' ') {
			// An item of the sequence the key above holds, unindented.
			if !sequence {
				return parseIt, kind
			}
			continue
		}
		key, value, ok := topLevelKey(line)
		if !ok {
			return parseIt, kind
		}
		content = true
		value = bytes.TrimLeft(value, " ")
		sequence = len(value) == 0 || value[0] == '#'
		switch string(key) {
		case "kind", "apiVersion":
			// apiVersion is read too (and a tag or a mapping there is a
			// problem) before the kind decides.
			word, ok := plainWord(value)
			if !ok || string(key) == "kind" && hasKind {
				return parseIt, kind
			}
			if string(key) == "kind" {
				kind, hasKind = word, true
			}
			continued = true
		default:
			if slices.Contains(exportKeys, string(key)) {
				return parseIt, kind // a platform's export, perhaps
			}
		}
	}
	if !content {
		return emptyDoc, kind
	}
	switch string(kind) {
	case "":
		// Read when it is a platform's export, whose keys are at the top
		// level (so not here); skipped otherwise, as parsed.
		return skipIt, kind
	case "ConfigMap":
		// Read when a platform claims it, which it does only when the
		// document holds the platform's word, which no text spells
		// without its letters but a double-quoted escape.
		if !slices.ContainsFunc(configMapWords, func(w []byte) bool { return bytes.Contains(doc, w) }) && bytes.IndexByte(doc, '\\') < 0 {
			return skipIt, kind
		}
	}
	if w := kindWord(kind); w != "" && !bytes.Contains(doc, []byte(w)) && bytes.IndexByte(doc, '\\') < 0 {
		return skipIt, kind // read only when it holds the word, as a ConfigMap
	}
	// The kinds read are parsed whatever their apiVersion: one of
	// another group is skipped by the parse, and one that does not parse
	// is the file's error (IDL001), as a reader's kind written wrongly
	// should be.
	if slices.Contains(readKinds, string(kind)) {
		return parseIt, kind
	}
	return skipIt, kind
}

// otherBreaks are the line breaks of the YAML parser (YAML 1.1) other
// than "\n" and "\r": NEL, LS and PS.
var otherBreaks = [][]byte{[]byte("\u0085"), []byte("\u2028"), []byte("\u2029")}

// topLevelKey splits a line at column 0 written "key: value" or "key:",
// the key plain: letters, digits and "_./-" only.
func topLevelKey(line []byte) (key, value []byte, ok bool) {
	i := bytes.IndexByte(line, ':')
	if i <= 0 || !plainChars(line[:i]) || i+1 < len(line) && line[i+1] != ' ' {
		return nil, nil, false
	}
	return line[:i], line[i+1:], true
}

// plainWord returns a value written as a plain word of plainChars
// starting with a letter, perhaps followed by a comment: a string to the
// YAML parser, unless it is one of the words the parser reads as a
// boolean or null.
func plainWord(value []byte) ([]byte, bool) {
	end := bytes.IndexByte(value, ' ')
	if end < 0 {
		end = len(value)
	}
	word, rest := value[:end], bytes.TrimLeft(value[end:], " ")
	if len(word) == 0 || !isLetter(word[0]) || !plainChars(word) || len(rest) > 0 && rest[0] != '#' {
		return nil, false
	}
	switch strings.ToLower(string(word)) {
	case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
		return nil, false
	}
	return word, true
}

func plainChars(b []byte) bool {
	for _, c := range b {
		if !isLetter(c) && !('0' <= c && c <= '9') && c != '_' && c != '.' && c != '/' && c != '-' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
