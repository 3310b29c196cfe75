package conform

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/report/junitxml"
)

// Width is the widest line conform writes in text: the text format, the
// notes and the verbose log wrap or cut their lines to it.
const Width = 100

// Writer writes the output of a run as it happens: Begin before the first
// probe, Probe after each probe, End once at the end.
type Writer interface {
	Begin(*Plan) error
	Probe(*Result) error
	End(*Report) error
}

// Formats are the names NewWriter knows.
var Formats = []string{"text", "json", "junit"}

// NewWriter returns the writer of a format. Text streams to stdout, with
// PASS, FAIL and SKIP coloured when color is set; json and junit write one
// document to stdout at the end, and the plan (bounds and notes) to stderr
// before the run, so stdout stays machine-readable.
func NewWriter(format string, stdout, stderr io.Writer, color bool) (Writer, error) {
	switch format {
	case "text":
		return &textWriter{w: stdout, color: color}, nil
	case "json":
		return documentWriter{stdout, stderr, writeJSON}, nil
	case "junit":
		return documentWriter{stdout, stderr, writeJUnit}, nil
	}
	return nil, fmt.Errorf("unknown format %q; want one of %s", format, strings.Join(Formats, ", "))
}

type nopWriter struct{}

func (nopWriter) Begin(*Plan) error   { return nil }
func (nopWriter) Probe(*Result) error { return nil }
func (nopWriter) End(*Report) error   { return nil }

// textWriter writes one line per probe as it ends:
//
//	PASS CF03 idempotency_replay      same key, same payload, after CF02 finished
//
// then, for a failure, what was expected, what came back, a hint and a
// body diff, and for a skip why; last a summary line.
type textWriter struct {
	w     io.Writer
	color bool
}

func (t *textWriter) Begin(p *Plan) error {
	return writePlan(t.w, p)
}

// writePlan writes the bounds and the notes, wrapped to Width.
func writePlan(w io.Writer, p *Plan) error {
	bw := bufio.NewWriter(w)
	writeWrapped(bw, "", p.Bounds.String(), "  ")
	for _, n := range p.Notes {
		writeWrapped(bw, "note: ", n, "  ")
	}
	for _, f := range p.PolicyFindings {
		writeWrapped(bw, "note: the policy as written: ", f.String(), "  ")
	}
	return bw.Flush()
}

// checksWidth aligns the probe names after the longest rule text.
var checksWidth = func() int {
	n := 0
	for _, p := range probes {
		n = max(n, len(p.Checks))
	}
	return n
}()

const detailIndent = "     "

var statusColors = map[Status]*color.Color{
	Pass: color.New(color.FgGreen, color.Bold),
	Fail: color.New(color.FgRed, color.Bold),
	Skip: color.New(color.FgYellow),
}

func (t *textWriter) Probe(r *Result) error {
	bw := bufio.NewWriter(t.w)
	status := strings.ToUpper(string(r.Status))
	head := fmt.Sprintf("%s %s %-*s  ", status, r.ID, checksWidth, r.Checks)
	lines := wrap(head, r.Name, strings.Repeat(" ", len(head)))
	if t.color {
		c := statusColors[r.Status]
		c.EnableColor()
		lines[0] = c.Sprint(status) + strings.TrimPrefix(lines[0], status)
	}
	for _, l := range lines {
		fmt.Fprintln(bw, l)
	}
	cont := detailIndent + strings.Repeat(" ", len("expected: "))
	switch r.Status {
	case Skip:
		writeWrapped(bw, detailIndent+"skipped: ", r.Reason, cont)
	case Fail:
		writeWrapped(bw, detailIndent+"expected: ", r.Expected, cont)
		writeWrapped(bw, detailIndent+"got:      ", r.Got, cont)
		if r.Hint != "" {
			writeWrapped(bw, detailIndent+"hint:     ", r.Hint, cont)
		}
		if r.Diff != "" {
			sides, lines, _ := strings.Cut(r.Diff, "\n")
			writeWrapped(bw, detailIndent+"diff ", sides+":", cont)
			for line := range strings.Lines(lines) {
				fmt.Fprintf(bw, "%s  %s\n", detailIndent, fit(strings.TrimSuffix(line, "\n"), diffWidth))
			}
		}
	}
	if r.Note != "" {
		writeWrapped(bw, detailIndent+"note:     ", r.Note, cont)
	}
	return bw.Flush()
}

func (t *textWriter) End(r *Report) error {
	_, err := fmt.Fprintf(t.w, "%d probes: %d passed, %d failed, %d skipped (%d requests, %.2fs)\n",
		len(r.Results), r.Count(Pass), r.Count(Fail), r.Count(Skip), r.Requests, r.Duration.Seconds())
	return err
}

// writeWrapped writes text wrapped to Width, see wrap.
func writeWrapped(w io.Writer, first, text, rest string) {
	for _, l := range wrap(first, text, rest) {
		fmt.Fprintln(w, l)
	}
}

// wrap breaks text into lines of at most Width characters at spaces, the
// first line starting with first and the others with rest; a word longer
// than a line is cut.
func wrap(first, text, rest string) []string {
	var lines []string
	line, start := first, true // start: nothing of text on this line yet
	for _, word := range strings.Split(text, " ") {
		n, w := utf8.RuneCountInString(line), utf8.RuneCountInString(word)
		switch {
		case start:
		case n+1+w <= Width:
			line += " "
		default:
			lines = append(lines, line)
			line = rest
		}
		for utf8.RuneCountInString(line)+utf8.RuneCountInString(word) > Width {
			room := Width - utf8.RuneCountInString(line)
			if room < 1 {
				lines = append(lines, line)
				line = rest
				continue
			}
			head := cutRunes(word, room)
			lines = append(lines, line+head)
			line, word = rest, word[len(head):]
		}
		line += word
		start = false
	}
	return append(lines, line)
}

// fit cuts a line to width characters, marking the cut.
func fit(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	return cutRunes(s, width-3) + "..."
}

// documentWriter writes a whole document at the end.
type documentWriter struct {
	stdout, stderr io.Writer
	write          func(io.Writer, *Report) error
}

func (d documentWriter) Begin(p *Plan) error { return writePlan(d.stderr, p) }

func (documentWriter) Probe(*Result) error { return nil }

func (d documentWriter) End(r *Report) error { return d.write(d.stdout, r) }

// The JSON document. Its shape is stable: fields may be added, never
// renamed or removed.
type jsonReport struct {
	Target         string           `json:"target"` // the first target
	Targets        []string         `json:"targets"`
	Operation      string           `json:"operation"`
	Effects        string           `json:"effects,omitempty"`
	Origin         string           `json:"origin,omitempty"` // CF19's
	Bounds         jsonBounds       `json:"bounds"`
	Notes          []string         `json:"notes,omitempty"`
	PolicyFindings []checks.Finding `json:"policy_findings"`
	Probes         []jsonProbe      `json:"probes"`
	Summary        jsonSummary      `json:"summary"`
}

type jsonBounds struct {
	Probes        int      `json:"probes"`
	MaxRequests   int      `json:"max_requests"`
	Concurrency   int      `json:"concurrency"`
	TimeoutMS     int64    `json:"timeout_ms"`
	WaitTimeoutMS int64    `json:"wait_timeout_ms"`
	DeadlineMS    int64    `json:"deadline_ms"`
	MaxBodyBytes  int      `json:"max_body_bytes"`
	Headers       []string `json:"headers,omitempty"`
}

type jsonProbe struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Checks     string  `json:"checks"`
	Status     Status  `json:"status"`
	Reason     string  `json:"reason,omitempty"`
	Expected   string  `json:"expected,omitempty"`
	Got        string  `json:"got,omitempty"`
	Hint       string  `json:"hint,omitempty"`
	Diff       string  `json:"diff,omitempty"`
	Note       string  `json:"note,omitempty"`
	Requests   int     `json:"requests"`
	DurationMS float64 `json:"duration_ms"`
}

type jsonSummary struct {
	Probes     int     `json:"probes"`
	Passed     int     `json:"passed"`
	Failed     int     `json:"failed"`
	Skipped    int     `json:"skipped"`
	Requests   int     `json:"requests"`
	DurationMS float64 `json:"duration_ms"`
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

func writeJSON(w io.Writer, r *Report) error {
	b := r.Bounds
	doc := jsonReport{
		Target: b.Targets[0], Targets: b.Targets, Operation: b.Operation, Effects: b.Effects, Origin: b.Origin,
		Bounds: jsonBounds{
			Probes: b.Probes, MaxRequests: b.MaxRequests, Concurrency: b.Concurrency,
			TimeoutMS: b.Timeout.Milliseconds(), WaitTimeoutMS: b.WaitTimeout.Milliseconds(), DeadlineMS: b.Deadline.Milliseconds(),
			MaxBodyBytes: b.MaxBodyBytes, Headers: b.Headers,
		},
		Notes:          r.Notes,
		PolicyFindings: r.PolicyFindings,
		Probes:         make([]jsonProbe, len(r.Results)),
		Summary: jsonSummary{
			Probes: len(r.Results), Passed: r.Count(Pass), Failed: r.Count(Fail), Skipped: r.Count(Skip),
			Requests: r.Requests, DurationMS: ms(r.Duration),
		},
	}
	if doc.PolicyFindings == nil {
		doc.PolicyFindings = []checks.Finding{}
	}
	for i, res := range r.Results {
		doc.Probes[i] = jsonProbe{
			ID: res.ID, Name: res.Name, Checks: res.Checks, Status: res.Status, Reason: res.Reason,
			Expected: res.Expected, Got: res.Got, Hint: res.Hint, Diff: res.Diff, Note: res.Note, Requests: res.Requests, DurationMS: ms(res.Duration),
		}
	}
	return encodeJSON(w, doc)
}

func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// WriteJSONError writes the json format's document for a run that could
// not start: {"error": "..."}, so a script reading stdout always gets a
// JSON object.
func WriteJSONError(w io.Writer, err error) error {
	return encodeJSON(w, struct {
		Error string `json:"error"`
	}{err.Error()})
}

// writeJUnit writes one testsuite for the run, one testcase per probe; a
// failed probe has a <failure>, a skipped one a <skipped>.
func writeJUnit(w io.Writer, r *Report) error {
	failed, skipped := r.Count(Fail), r.Count(Skip)
	suite := junitxml.Suite{
		Name:  fmt.Sprintf("conform %s, operation %s", strings.Join(r.Bounds.Targets, " "), r.Bounds.Operation),
		Tests: len(r.Results), Failures: failed, Skipped: skipped, Time: junitxml.Seconds(r.Duration),
	}
	for _, res := range r.Results {
		c := junitxml.Case{ClassName: "idemlint.conform", Name: res.ID + " " + res.Checks + ": " + res.Name, Time: junitxml.Seconds(res.Duration)}
		switch res.Status {
		case Fail:
			text := "expected: " + res.Expected + "\ngot: " + res.Got
			if res.Hint != "" {
				text += "\nhint: " + res.Hint
			}
			if res.Diff != "" {
				text += "\ndiff " + res.Diff
			}
			c.Failure = &junitxml.Failure{Message: "got " + res.Got, Type: res.Checks, Text: text}
		case Skip:
			c.Skipped = &junitxml.Skipped{Message: res.Reason}
		}
		suite.Cases = append(suite.Cases, c)
	}
	out := junitxml.Suites{Name: "idemlint conform", Tests: len(r.Results), Failures: failed, Skipped: skipped, Time: junitxml.Seconds(r.Duration), Suites: []junitxml.Suite{suite}}
	return junitxml.Write(w, out)
}
