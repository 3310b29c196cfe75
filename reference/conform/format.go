package conform

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/idemlint/idemlint/checks/report/junitxml"
)

// Writer writes the output of a run as it happens: Begin before the first
// request, Probe after each probe, End once at the end.
type Writer interface {
	Begin(Bounds) error
	Probe(*Result) error
	End(*Report) error
}

// Formats are the names NewWriter knows.
var Formats = []string{"text", "json", "junit"}

// NewWriter returns the writer of a format. Text streams to stdout; json
// and junit write one document to stdout at the end, and the bounds line
// to stderr before the run, so stdout stays machine-readable.
func NewWriter(format string, stdout, stderr io.Writer) (Writer, error) {
	switch format {
	case "text":
		return &textWriter{w: stdout}, nil
	case "json":
		return documentWriter{stdout, stderr, writeJSON}, nil
	case "junit":
		return documentWriter{stdout, stderr, writeJUnit}, nil
	}
	return nil, fmt.Errorf("unknown format %q; want one of %s", format, strings.Join(Formats, ", "))
}

type nopWriter struct{}

func (nopWriter) Begin(Bounds) error  { return nil }
func (nopWriter) Probe(*Result) error { return nil }
func (nopWriter) End(*Report) error   { return nil }

// textWriter writes one line per probe as it ends:
//
//	PASS CF03 idempotency_replay  same key, same payload, after CF02 finished
//
// then, for a failure, what was expected, what came back and a body diff,
// and for a skip why; last a summary line.
type textWriter struct{ w io.Writer }

func (t *textWriter) Begin(b Bounds) error {
	_, err := fmt.Fprintln(t.w, b)
	return err
}

// checksWidth aligns the probe names after the longest rule text.
var checksWidth = func() int {
	n := 0
	for _, p := range probes {
		n = max(n, len(p.checks))
	}
	return n
}()

const detailIndent = "     "

func (t *textWriter) Probe(r *Result) error {
	bw := bufio.NewWriter(t.w)
	fmt.Fprintf(bw, "%s %s %-*s  %s\n", strings.ToUpper(string(r.Status)), r.ID, checksWidth, r.Checks, r.Name)
	switch r.Status {
	case Skip:
		fmt.Fprintf(bw, "%sskipped: %s\n", detailIndent, r.Reason)
	case Fail:
		fmt.Fprintf(bw, "%sexpected: %s\n%sgot:      %s\n", detailIndent, r.Expected, detailIndent, r.Got)
		if r.Diff != "" {
			sides, lines, _ := strings.Cut(r.Diff, "\n")
			fmt.Fprintf(bw, "%sdiff %s:\n", detailIndent, sides)
			for line := range strings.Lines(lines) {
				fmt.Fprintf(bw, "%s  %s", detailIndent, line)
			}
			fmt.Fprintln(bw)
		}
	}
	return bw.Flush()
}

func (t *textWriter) End(r *Report) error {
	_, err := fmt.Fprintf(t.w, "%d probes: %d passed, %d failed, %d skipped (%d requests, %.2fs)\n",
		len(r.Results), r.Count(Pass), r.Count(Fail), r.Count(Skip), r.Requests, r.Duration.Seconds())
	return err
}

// documentWriter writes a whole document at the end.
type documentWriter struct {
	stdout, stderr io.Writer
	write          func(io.Writer, *Report) error
}

func (d documentWriter) Begin(b Bounds) error {
	_, err := fmt.Fprintln(d.stderr, b)
	return err
}

func (documentWriter) Probe(*Result) error { return nil }

func (d documentWriter) End(r *Report) error { return d.write(d.stdout, r) }

// The JSON document. Its shape is stable: fields may be added, never
// renamed or removed.
type jsonReport struct {
	Target    string      `json:"target"`
	Operation string      `json:"operation"`
	Effects   string      `json:"effects,omitempty"`
	Bounds    jsonBounds  `json:"bounds"`
	Probes    []jsonProbe `json:"probes"`
	Summary   jsonSummary `json:"summary"`
}

type jsonBounds struct {
	Probes        int      `json:"probes"`
	MaxRequests   int      `json:"max_requests"`
	Concurrency   int      `json:"concurrency"`
	TimeoutMS     int64    `json:"timeout_ms"`
	WaitTimeoutMS int64    `json:"wait_timeout_ms"`
	DeadlineMS    int64    `json:"deadline_ms"`
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
	Diff       string  `json:"diff,omitempty"`
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
		Target: b.Target, Operation: b.Operation, Effects: b.Effects,
		Bounds: jsonBounds{
			Probes: b.Probes, MaxRequests: b.MaxRequests, Concurrency: b.Concurrency,
			TimeoutMS: b.Timeout.Milliseconds(), WaitTimeoutMS: b.WaitTimeout.Milliseconds(), DeadlineMS: b.Deadline.Milliseconds(),
			Headers: b.Headers,
		},
		Probes: make([]jsonProbe, len(r.Results)),
		Summary: jsonSummary{
			Probes: len(r.Results), Passed: r.Count(Pass), Failed: r.Count(Fail), Skipped: r.Count(Skip),
			Requests: r.Requests, DurationMS: ms(r.Duration),
		},
	}
	for i, res := range r.Results {
		doc.Probes[i] = jsonProbe{
			ID: res.ID, Name: res.Name, Checks: res.Checks, Status: res.Status, Reason: res.Reason,
			Expected: res.Expected, Got: res.Got, Diff: res.Diff, Requests: res.Requests, DurationMS: ms(res.Duration),
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// writeJUnit writes one testsuite for the run, one testcase per probe; a
// failed probe has a <failure>, a skipped one a <skipped>.
func writeJUnit(w io.Writer, r *Report) error {
	failed, skipped := r.Count(Fail), r.Count(Skip)
	suite := junitxml.Suite{
		Name:  fmt.Sprintf("conform %s, operation %s", r.Bounds.Target, r.Bounds.Operation),
		Tests: len(r.Results), Failures: failed, Skipped: skipped, Time: junitxml.Seconds(r.Duration),
	}
	for _, res := range r.Results {
		c := junitxml.Case{ClassName: "idemlint.conform", Name: res.ID + " " + res.Checks + ": " + res.Name, Time: junitxml.Seconds(res.Duration)}
		switch res.Status {
		case Fail:
			text := "expected: " + res.Expected + "\ngot: " + res.Got
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
