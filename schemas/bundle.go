package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// commonRef starts every reference into the shared definitions.
const commonRef = `"common.schema.json#/$defs/`

// SelfContained returns the schema name as one file that resolves on its
// own, for editors that validate offline: each reference into
// common.schema.json becomes a reference into the schema's own "$defs",
// which holds common's definitions (the schemas that reference common have
// none of their own). ok=false if name is unknown.
func SelfContained(name string) (src []byte, ok bool) {
	src, ok = Source(name)
	if !ok || !bytes.Contains(src, []byte(commonRef)) {
		return src, ok
	}
	common, _ := Source(commonName)
	var shared struct {
		Defs json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(common, &shared); err != nil {
		// Embedded and covered by tests: a build defect.
		panic("schemas: reading common.schema.json: " + err.Error())
	}
	out := bytes.ReplaceAll(src, []byte(commonRef), []byte(`"#/$defs/`))
	// The schema is one object: drop its closing brace, add the
	// definitions as its last member, close it again.
	out = bytes.TrimRight(out, " \t\r\n")
	out = bytes.TrimRight(out[:len(out)-1], " \t\r\n")
	out = append(out, ",\n  \"$defs\": "...)
	out = append(out, shared.Defs...)
	return append(out, "\n}\n"...), true
}

// FileName is the file a schema is saved as ("adapter.schema.json").
func FileName(name string) string { return name + ".schema.json" }

// Names lists the schemas SelfContained returns: the kinds, then the
// shared definitions, the envelope and the project configuration.
func Names() []string {
	return append(Kinds(), "common", "envelope", "config")
}

// Show is "idemlint schema [KIND] [--out DIR]": with dir, it writes the
// schema kind, or every schema when kind is "", into dir (WriteFiles);
// without, it prints kind's self-contained schema on w, or the names of
// the schemas when kind is "".
func Show(w io.Writer, kind, dir string) error {
	names := Names()
	if kind != "" {
		names = []string{kind}
	}
	if dir != "" {
		return WriteFiles(w, dir, names)
	}
	if kind == "" {
		_, err := fmt.Fprintln(w, strings.Join(names, "\n"))
		return err
	}
	src, ok := SelfContained(kind)
	if !ok {
		return unknownError(kind)
	}
	_, err := w.Write(src)
	return err
}

// WriteFiles writes the self-contained schemas names into dir, created if
// needed, each as FileName(name) replacing a file of that name, and says
// on w which files it wrote. An unknown name writes nothing.
func WriteFiles(w io.Writer, dir string, names []string) error {
	for _, name := range names {
		if _, ok := SelfContained(name); !ok {
			return unknownError(name)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		src, _ := SelfContained(name)
		target := filepath.Join(dir, FileName(name))
		if err := os.WriteFile(target, src, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s\n", target)
	}
	return nil
}

func unknownError(name string) error {
	return fmt.Errorf("unknown schema %q (want one of %s)", name, strings.Join(Names(), ", "))
}
