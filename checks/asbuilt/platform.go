package asbuilt

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v4"
)

// An as-built platform is one file: its reader, and one *platform value
// declaring what it reads and the defaults it relies on, listed in
// platforms. Reading (document, configMap), triage and Defaults go through
// that list; none of them names a platform.

// platforms are the platforms idemlint reads, in the order of Defaults
// (docs/as-built.md's table) and in which they claim a ConfigMap. To add one, write
// its file (istio.go is the model) declaring its *platform value, and add
// that value here, where it falls in that order.
var platforms = []*platform{
	istio,
	ingressNginx,
	gatewayAPI,
	apiGateway,
	nginx,
	kong,
	envoy,
	envoyGateway,
	haproxy,
}

// platform is what one platform reads and relies on.
type platform struct {
	name Platform
	// kinds are the Kubernetes kinds the platform reads.
	kinds []kindReader
	// configMap, when not nil, is the cluster-wide ConfigMap it reads.
	configMap *configMapReader
	// export, when not nil, is a document without a kind it reads.
	export *exportReader
	// text, when not nil, is the platform's own configuration language
	// it reads (nginx.conf, haproxy.cfg).
	text *textReader
	// defaults are what it does when nothing is written, each with the
	// documentation it comes from.
	defaults []*Default
}

// kindReader reads one kind of resource of the API groups given.
type kindReader struct {
	kind   string
	groups []string // of apiVersion, before its "/"
	// word, when set, is one a document of the kind that the reader
	// reads always holds: most of a common kind are not the platform's
	// (a Service without Kong's annotation), and triage skips the others
	// unparsed.
	word string
	read func(f *fileRead, root *yaml.Node)
}

// configMapReader reads a ConfigMap (apiVersion v1) it claims. Most
// ConfigMaps are an application's own: word is one a ConfigMap it
// claims always holds, so triage skips the others unparsed.
type configMapReader struct {
	word   string
	claims func(f *fileRead, root *yaml.Node, name, label string) bool
	read   func(f *fileRead, root *yaml.Node)
}

// exportReader reads a document without a kind: keys are the top-level
// keys one has (triage parses a document with any of them), is tells
// it apart after the parse.
type exportReader struct {
	keys []string
	is   func(r *reader, root *yaml.Node) bool
	read func(f *fileRead, root *yaml.Node)
}

// textReader reads files in a platform's own configuration language:
// exts are the name endings a walked directory takes, is tells such a
// file from another program's of the same ending (skipped).
type textReader struct {
	exts []string
	is   func(data []byte) bool
	read func(f *fileRead, data []byte)
}

// textReaderOf returns the reader of the files named like path.
func textReaderOf(path string) *textReader {
	for _, p := range platforms {
		if p.text != nil && slices.ContainsFunc(p.text.exts, func(ext string) bool { return strings.HasSuffix(strings.ToLower(path), ext) }) {
			return p.text
		}
	}
	return nil
}

// readsText reports whether platform p reads its own configuration
// language rather than Kubernetes documents.
func readsText(p Platform) bool {
	return slices.ContainsFunc(platforms, func(q *platform) bool { return q.name == p && q.text != nil })
}

// listKind is the kind whose items are each read as a document.
const listKind = "List"

// What is derived from platforms, once. Defaults are every default, for
// docs/as-built.md and explain: by platform, then as the platform lists them.
// kindWords are words one of which a document idemlint reads holds; a
// ConfigMap is read only when it also holds one of configMapWords.
// readKinds are the kinds a reader reads (document), List included.
// exportKeys are the top-level keys of a document without a kind that a
// platform reads.
var Defaults, kindWords, configMapWords, readKinds, exportKeys = index(platforms)

// index derives from ps what reading and triage look up. A platform
// declared incompletely (a default without the documentation it comes
// from, a repeated name) stops the program at start: it is the
// contributor's mistake, never the input's.
func index(ps []*platform) (defaults []*Default, kindWords, configMapWords [][]byte, readKinds, exportKeys []string) {
	if err := checkPlatforms(ps); err != nil {
		panic("asbuilt: " + err.Error())
	}
	kindWords, readKinds = [][]byte{[]byte(listKind)}, []string{listKind}
	for _, q := range ps {
		for _, d := range q.defaults {
			d.Platform = q.name
			defaults = append(defaults, d)
		}
		for _, k := range q.kinds {
			kindWords = append(kindWords, []byte(cmp.Or(k.word, k.kind)))
			readKinds = append(readKinds, k.kind)
		}
		if q.configMap != nil {
			configMapWords = append(configMapWords, []byte(q.configMap.word))
			if !slices.Contains(readKinds, "ConfigMap") {
				readKinds = append(readKinds, "ConfigMap")
			}
		}
		if q.export != nil {
			for _, k := range q.export.keys {
				kindWords = append(kindWords, []byte(k))
				exportKeys = append(exportKeys, k)
			}
		}
	}
	return defaults, kindWords, configMapWords, readKinds, exportKeys
}

// checkPlatforms reports the first platform of ps declared incompletely
// or listed twice.
func checkPlatforms(ps []*platform) error {
	for i, p := range ps {
		if err := p.check(); err != nil {
			return fmt.Errorf("platform %s: %w", p.name, err)
		}
		if slices.ContainsFunc(ps[:i], func(q *platform) bool { return q.name == p.name }) {
			return fmt.Errorf("platform %s listed twice", p.name)
		}
	}
	return nil
}

// check reports what p lacks.
func (p *platform) check() error {
	if p.name == "" {
		return errors.New("no name")
	}
	if len(p.kinds) == 0 && p.configMap == nil && p.export == nil && p.text == nil {
		return errors.New("reads nothing")
	}
	for _, k := range p.kinds {
		if k.kind == "" || k.kind == listKind || k.kind == "ConfigMap" || len(k.groups) == 0 || k.read == nil {
			return fmt.Errorf("kind %q: no kind, groups or reader, or a kind read apart", k.kind)
		}
	}
	if c := p.configMap; c != nil && (c.word == "" || c.claims == nil || c.read == nil) {
		return errors.New("ConfigMap reader incomplete")
	}
	if e := p.export; e != nil && (len(e.keys) == 0 || e.is == nil || e.read == nil) {
		return errors.New("export reader incomplete")
	}
	if t := p.text; t != nil && (len(t.exts) == 0 || t.is == nil || t.read == nil) {
		return errors.New("text reader incomplete")
	}
	for _, d := range p.defaults {
		if d.ID == "" || d.Setting == "" || d.Value == "" || d.Source == "" {
			return fmt.Errorf("default %q: no setting, value or documentation source", d.ID)
		}
	}
	return nil
}

// kindWord returns the word every document of kind that a reader reads
// holds (kindReader.word); "" when it reads the kind whatever it holds.
func kindWord(kind []byte) string {
	for _, p := range platforms {
		for _, k := range p.kinds {
			if k.kind == string(kind) {
				return k.word
			}
		}
	}
	return ""
}

// kindReaderOf returns the reader of a resource of kind and API group.
func kindReaderOf(kind, group string) *kindReader {
	for _, p := range platforms {
		for i, k := range p.kinds {
			if k.kind == kind && slices.Contains(k.groups, group) {
				return &p.kinds[i]
			}
		}
	}
	return nil
}
