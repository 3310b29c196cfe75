package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/spf13/cobra"
)

var updateHelp = flag.Bool("update", false, "rewrite "+helpGolden+" from the commands' --help")

// helpGolden holds what "--help" prints for every command, one file each
// named by its command line.
const helpGolden = "testdata/help.txtar"

// TestHelpOutput holds the --help of every command, cobra's help and
// completion commands included, to helpGolden byte for byte: the long
// help texts live apart from the code that wires them (help/*.txt, each
// some command's), and moving or editing one must not change what users
// read unnoticed. A new command needs its entry (go test -run
// TestHelpOutput -update, then review the diff).
func TestHelpOutput(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	// cobra adds these two when it executes; the walk must see them.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var got txtar.Archive
	used := map[string]bool{} // the long help texts the commands show
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != exitOK || stderr.Len() > 0 {
			t.Errorf("idemlint %s: exit status %d, stderr %q", strings.Join(args, " "), code, stderr.String())
		}
		if !bytes.HasSuffix(stdout.Bytes(), []byte("\n")) {
			t.Errorf("idemlint %s: output does not end in a newline, which the archive cannot hold", strings.Join(args, " "))
		}
		got.Files = append(got.Files, txtar.File{Name: c.CommandPath() + " --help", Data: stdout.Bytes()})
		used[c.Long] = true
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	files, err := helpTexts.ReadDir("help")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := strings.TrimSuffix(f.Name(), ".txt"); !used[longHelp(name)] {
			t.Errorf("help/%s is no command's long help", f.Name())
		}
	}
	if *updateHelp {
		if err := os.WriteFile(helpGolden, txtar.Format(&got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := txtar.ParseFile(helpGolden)
	if err != nil {
		t.Fatal(err)
	}
	outputs := func(a *txtar.Archive) map[string]string {
		m := make(map[string]string, len(a.Files))
		for _, f := range a.Files {
			m[f.Name] = string(f.Data)
		}
		return m
	}
	if diff := cmp.Diff(outputs(want), outputs(&got)); diff != "" {
		t.Errorf("--help output differs from %s (-want +got):\n%s", helpGolden, diff)
	}
}
