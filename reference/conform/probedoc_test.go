package conform

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every probe is documented: ids CF01, CF02, ... in run order, and each
// part of its doc written, the one-line ones on one line.
func TestProbesDocumented(t *testing.T) {
	ps := Probes()
	if len(ps) == 0 {
		t.Fatal("no probes")
	}
	for i, p := range ps {
		if want := fmt.Sprintf("CF%02d", i+1); p.ID != want {
			t.Errorf("probe %d is %s, want %s: ids follow the run order without gaps", i, p.ID, want)
		}
		for field, text := range map[string]string{"Name": p.Name, "Checks": p.Checks, "Passes": p.Passes} {
			if text == "" || strings.Contains(text, "\n") {
				t.Errorf("%s.%s = %q, want one line", p.ID, field, text)
			}
		}
		for field, text := range map[string]string{"Why": p.Why, "Sends": p.Sends, "Skipped": p.Skipped} {
			if !strings.HasSuffix(text, ".") {
				t.Errorf("%s.%s = %q, want sentences", p.ID, field, text)
			}
		}
		// The skipped text is what the skip function does: a probe that
		// never skips says so, and one that can names a condition.
		neverSkips := fmt.Sprintf("%p", p.skip) == fmt.Sprintf("%p", applicable)
		if (p.Skipped == "Never.") != neverSkips {
			t.Errorf("%s.Skipped = %q, but whether its skip function never skips is %v", p.ID, p.Skipped, neverSkips)
		}
	}
}

func TestLookupProbe(t *testing.T) {
	for _, id := range []string{"CF07", "cf07", "Cf07"} {
		if p, ok := LookupProbe(id); !ok || p.ID != "CF07" || p != Probes()[6] {
			t.Errorf("LookupProbe(%q) = %v, %v; want CF07", id, p, ok)
		}
	}
	for _, id := range []string{"CF7", "CF00", "CF99", "IDL102", ""} {
		if p, ok := LookupProbe(id); ok {
			t.Errorf("LookupProbe(%q) = %s, want none", id, p.ID)
		}
	}
}

func TestSuggestProbe(t *testing.T) {
	for arg, want := range map[string]string{
		"CF7":    "CF07",
		"cf7":    "CF07",
		"cf-07":  "CF07",
		"CF007":  "CF07",
		" CF18 ": "CF18",
		"CG07":   "CF07", // one letter wrong
		"C07":    "CF07", // one letter missing
		"CF0":    "",     // CF01-CF09 are all one away
		"CFO7":   "",     // CF07 and CF17 are both one away
		"CF77":   "",     // CF07 and CF17 again
		"CF":     "",
		"IDL102": "",
		"":       "",
	} {
		if got := SuggestProbe(arg); got != want {
			t.Errorf("SuggestProbe(%q) = %q, want %q", arg, got, want)
		}
	}
}

// CF04's explanation, whole: the parts of its doc, the requests it sends
// and how much the effects counter must grow.
func TestExplainProbe(t *testing.T) {
	p, _ := LookupProbe("CF04")
	var b bytes.Buffer
	if err := p.Explain(&b); err != nil {
		t.Fatal(err)
	}
	want := `CF04 key echo on CF02's answer and CF03's replay
checks: echo_key_header
passes when: CF02's answer, and CF03's replay when it ran, each carry one key header with the key
  sent

Why it matters:
  A client, proxy or log that correlates answers by the echoed key must see
  the key it sent: an echo of another key, or two, points the trace at the
  wrong request.

What it sends:
  Nothing of its own: it reads CF02's answer and CF03's replay.

When it is skipped:
  When http_idempotency.echo_key_header is not true.

requests: none of its own
effects counter (--effects-url): not read: the probe judges the answers alone
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("explanation (-want +got):\n%s", diff)
	}
}

// The requests and effects lines follow the probe's bounds, which the
// run's MaxRequests and the effects check use too.
func TestExplainBounds(t *testing.T) {
	for id, want := range map[string][]string{
		"CF02": {"requests: at most 1\n", "must grow by 1 over the probe (one execution)\n"},
		"CF07": {"requests: --concurrency (16 by default) at once\n"},
		"CF18": {"requests: 2, then --concurrency (16 by default) at once\n"},
		"CF11": {"not read: the probe judges the answers alone\n"},
	} {
		p, _ := LookupProbe(id)
		var b bytes.Buffer
		if err := p.Explain(&b); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("explain %s lacks %q:\n%s", id, w, b.String())
			}
		}
	}
}

func TestWriteProbes(t *testing.T) {
	var b bytes.Buffer
	if err := WriteProbes(&b, "text"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(probes)+1 {
		t.Fatalf("text has %d lines, want a header and %d probes:\n%s", len(lines), len(probes), b.String())
	}
	if want := "CF07  at-most-once, inflight      concurrent requests with one fresh key"; lines[7] != want {
		t.Errorf("text line 8 = %q, want %q", lines[7], want)
	}
	if err := WriteProbes(&b, "yaml"); err == nil || err.Error() != `unknown format "yaml" (want json, markdown, text)` {
		t.Errorf("WriteProbes(yaml) = %v", err)
	}
}

// TestREADMEProbeTable keeps the probe table in docs/probes.md what
// "idemlint probes --format markdown" prints, so the docs follow the probes.
func TestREADMEProbeTable(t *testing.T) {
	probes, err := os.ReadFile("../../docs/probes.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- generated by: idemlint probes --format markdown -->\n"
	_, table, ok := strings.Cut(string(probes), marker)
	if !ok {
		t.Fatalf("docs/probes.md lacks the marker %q", marker)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	var b bytes.Buffer
	if err := WriteProbes(&b, "markdown"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(b.String(), table+"\n"); diff != "" {
		t.Errorf("docs/probes.md's probe table is stale; replace it with the output of idemlint probes --format markdown (-want +got):\n%s", diff)
	}
}
