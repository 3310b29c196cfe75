package asbuilt

import (
	"fmt"
	"io"
)

// Default is what a platform does when nothing is written
// (docs/as-built.md, Defaults are configuration). It
// counts exactly like what is written, and a finding it causes names it.
// Value is written as the platform's own setting would be, and the
// readers parse it like a written one, so the table is the only place a
// default lives: each platform's file declares its rows, with the
// documentation each comes from, and Defaults (platform.go) lists them.
type Default struct {
	ID       string   // stable, for messages and docs: "istio.retries"
	Platform Platform // set from the platform declaring it (platforms)
	// Setting is what is not written: "VirtualService http[].retries".
	Setting string
	Value   string // as the platform would read it: "error timeout"
	Source  string // the documentation or code it comes from
	// Live is set when a test runs the proxy itself and holds the row to
	// what it does (live_test.go); otherwise the row is read from Source
	// alone.
	Live bool
}

func (d *Default) String() string {
	return d.Setting + " defaults to " + d.Value + " (" + d.Source + ")"
}

// LookupDefault returns the default of the table with the id (as
// findings name it: "istio.retries").
func LookupDefault(id string) (*Default, bool) {
	for _, d := range Defaults {
		if d.ID == id {
			return d, true
		}
	}
	return nil, false
}

// Explain writes what the default is and where it comes from, for
// "idemlint explain ID".
func (d *Default) Explain(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s (%s default)\n\n  not written: %s\n  idemlint applies: %s\n  source: %s\n", d.ID, d.Platform, d.Setting, d.Value, d.Source)
	return err
}
