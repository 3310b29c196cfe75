package conform

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/idemlint/idemlint/schemas/suggest"
)

// Probes returns every probe in the order they run, which is id order.
func Probes() []*Probe { return slices.Clone(probes) }

// LookupProbe finds a probe by id (case-insensitive).
func LookupProbe(id string) (*Probe, bool) {
	id = strings.ToUpper(id)
	for _, p := range probes {
		if p.ID == id {
			return p, true
		}
	}
	return nil, false
}

// SuggestProbe returns the id of the probe that arg most likely misspells
// ("CF7", "cf-07", "CF007": CF07; "CG07" too), or "" when no probe, or
// more than one, is near enough.
func SuggestProbe(arg string) string {
	id := strings.ToUpper(strings.TrimSpace(arg))
	if digits, ok := strings.CutPrefix(id, "CF"); ok {
		if n, err := strconv.Atoi(strings.TrimLeft(digits, "-_ ")); err == nil {
			if p, ok := LookupProbe(fmt.Sprintf("CF%02d", n)); ok {
				return p.ID
			}
		}
	}
	// Else one character wrong, missing or extra, when that names one probe.
	near := ""
	for _, p := range probes {
		if suggest.Distance(id, p.ID) == 1 {
			if near != "" {
				return ""
			}
			near = p.ID
		}
	}
	return near
}

// Explain writes what p checks, why it matters, what it sends, when it
// passes and when it is skipped, then the requests it sends and how much
// it lets the effects counter grow: "idemlint explain CF07".
func (p *Probe) Explain(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s %s\nchecks: %s\n", p.ID, p.Name, p.Checks)
	writeWrapped(bw, "passes when: ", p.Passes, "  ")
	for _, part := range []struct{ title, text string }{
		{"Why it matters", p.Why},
		{"What it sends", p.Sends},
		{"When it is skipped", p.Skipped},
	} {
		fmt.Fprintf(bw, "\n%s:\n  %s\n", part.title, strings.ReplaceAll(part.text, "\n", "\n  "))
	}
	fmt.Fprintln(bw)
	writeWrapped(bw, "requests: ", p.requestsText(), "  ")
	writeWrapped(bw, "effects counter (--effects-url): ", p.effectsText(), "  ")
	return bw.Flush()
}

// requestsText says how many requests p sends at most.
func (p *Probe) requestsText() string {
	burst := fmt.Sprintf("--concurrency (%d by default) at once", DefaultConcurrency)
	switch {
	case p.requests == 0 && !p.burst:
		return "none of its own"
	case p.requests == 0:
		return burst
	case p.burst:
		return fmt.Sprintf("%d, then %s", p.requests, burst)
	}
	return fmt.Sprintf("at most %d", p.requests)
}

// effectsText says how much p lets the effects counter grow.
func (p *Probe) effectsText() string {
	if p.effects < 0 {
		return "not read: the probe judges the answers alone"
	}
	return fmt.Sprintf("must grow by %d over the probe (%s)", p.effects, p.effectsWhy)
}

// ProbeFormats are the formats WriteProbes writes, sorted.
var ProbeFormats = []string{"json", "markdown", "text"}

// WriteProbes lists every probe in format (one of ProbeFormats): text, an
// aligned table of id, what it checks and what it sends; json, an array
// of the probes with all their documentation; markdown, the probe table
// of docs/probes.md.
func WriteProbes(w io.Writer, format string) error {
	switch format {
	case "text":
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tCHECKS\tPROBE")
		for _, p := range Probes() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.ID, p.Checks, p.Name)
		}
		return tw.Flush()
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(Probes())
	case "markdown":
		cell := strings.NewReplacer("|", `\|`)
		var b strings.Builder
		b.WriteString("| id | probe | checks | passes when |\n|---|---|---|---|\n")
		for _, p := range Probes() {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", p.ID, cell.Replace(p.Name), cell.Replace(p.Checks), cell.Replace(p.Passes))
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(ProbeFormats, ", "))
}
