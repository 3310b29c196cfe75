// Package explain tells why a rule matters and how to fix its findings,
// with examples taken from the fixture sets, so they cannot drift from what
// the checker does. "idemlint explain" prints it; the language server
// shows it on hover.
package explain

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/asbuilt"
	"github.com/idemlint/idemlint/checks/report"
	"github.com/idemlint/idemlint/fixtures"
)

// Write writes the explanation of rule r: its id, name, severity and
// summary, why it matters and how to fix a finding, then a bad and a good
// example from the fixture sets the tests hold the checker to.
func Write(w io.Writer, r *checks.Rule) error {
	ex, err := fixtures.ExampleOf(r.ID)
	if err != nil {
		return err
	}
	return explain(w, r, ex)
}

// writeDefaults lists the platform defaults the as-built rules rely on,
// each with its source and whether a test proves it on the proxy itself.
func writeDefaults(w io.Writer) {
	fmt.Fprintf(w, "\nPlatform defaults (proven live: a test runs the proxy and holds it to the row;\nelse read from the source given):\n")
	for _, d := range asbuilt.Defaults {
		how := "from source"
		if d.Live {
			how = "proven live"
		}
		fmt.Fprintf(w, "  %s, %s: %s\n", d.ID, how, d)
	}
}

// snippetContext is how many lines an example shows either side of its line.
const snippetContext = 3

// explain writes the explanation of r with its examples.
func explain(w io.Writer, r *checks.Rule, ex fixtures.Example) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s %s: %s, %s rule\n%s\n\n%s\n", r.ID, r.Name, r.Severity, r.Scope(), r.Summary, r.Doc)
	if r.Scope() == asbuilt.Config.Scope {
		writeDefaults(bw)
	}
	if ex.Bad == nil {
		fmt.Fprintf(bw, "\nNo examples: fixtures/rules/%s/ has no fixture set that triggers it.\n", r.ID)
		return bw.Flush()
	}
	fmt.Fprintf(bw, "\nBad: %s of the set fixtures/%s\n  %s\n\n", ex.Bad.File, ex.Bad.Set, ex.Finding)
	writeSnippet(bw, *ex.Bad)
	switch {
	case ex.Good != nil:
		fmt.Fprintf(bw, "\nGood: %s of the set fixtures/%s\n\n", ex.Good.File, ex.Good.Set)
		writeSnippet(bw, *ex.Good)
	case ex.NearMiss != "":
		fmt.Fprintf(bw, "\nGood: the documents of the set fixtures/%s\n", ex.NearMiss)
	}
	return bw.Flush()
}

// writeSnippet prints the lines around e, numbered, marking e's line with
// ">" and its column with a caret.
func writeSnippet(w io.Writer, e fixtures.Excerpt) {
	report.Snippet(w, e.Text, e.Line, e.Column, snippetContext)
}

// NoIDError is the usage error of "idemlint explain" without an id: it
// names the ids of rules, since that is what the user was most likely
// looking for.
func NoIDError(rules checks.Rules) error {
	return fmt.Errorf("explain needs a rule or probe id, e.g. \"idemlint explain IDL102\"; the rules are %s (\"idemlint rules\" and \"idemlint probes\" list them with their summaries)",
		strings.Join(rules.IDs(), ", "))
}

// UnknownIDError is the error of "idemlint explain ID" for an id that
// names neither a rule of rules nor a probe: it suggests the probe
// nearProbe (conform.SuggestProbe; "" for none), else the rules near id.
func UnknownIDError(rules checks.Rules, id, nearProbe string) error {
	if nearProbe != "" {
		return fmt.Errorf(`unknown rule or probe %q; did you mean %s? "idemlint probes" lists the probe ids`, id, nearProbe)
	}
	if len(rules.Near(id)) > 0 {
		return fmt.Errorf("unknown rule %q; %s", id, rules.Hint(id))
	}
	return fmt.Errorf(`unknown rule or probe %q; "idemlint rules" and "idemlint probes" list the ids`, id)
}
