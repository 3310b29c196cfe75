package asbuilt

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/idemlint/idemlint/checks/pathmatch"
)

// HAProxy: haproxy.cfg. Each backend (or listen section) is a resource
// of kind HAProxyBackend; it carries every operation of the edge it
// binds (ACL routing is not modelled). Names are HAProxy's configuration
// manual's. No well-kept Go parser of it exists; the language is lines
// of words.

// HAProxy is the platform's name in findings.
const HAProxy Platform = "haproxy"

// HAProxyBackendKind is the kind an edge's as_built entry names.
const HAProxyBackendKind = "HAProxyBackend"

// haproxy is the platform as platforms lists it.
var haproxy = &platform{
	name:     HAProxy,
	text:     &textReader{exts: []string{".cfg"}, is: isHAProxy, read: (*fileRead).haproxy},
	defaults: []*Default{HAProxyRetries, HAProxyRetryOn},
}

// The defaults it relies on.
var (
	HAProxyRetries = &Default{
		ID:      "haproxy.retries",
		Setting: "retries",
		Value:   "3",
		Source:  "HAProxy configuration manual, retries: 3 retries (4 attempts in all)",
		Live:    true,
	}
	HAProxyRetryOn = &Default{
		ID:      "haproxy.retry-on",
		Setting: "retry-on",
		Value:   "conn-failure",
		Source:  "HAProxy configuration manual, retry-on: conn-failure, a connection that could not be established",
		Live:    true,
	}
)

// haproxySections are the keywords that start a section.
var haproxySections = []string{"global", "defaults", "frontend", "backend", "listen", "resolvers", "userlist",
	"peers", "mailers", "program", "http-errors", "ring", "cache", "log-forward", "crt-store", "traces"}

// haLine is one line of words, at its first word.
type haLine struct {
	words []string
	at    Pos
}

// haproxyLines reads the lines of an HAProxy file: words apart by blanks,
// "#" comments, quotes and backslash escapes.
func haproxyLines(file string, data []byte) ([]haLine, *FileError) {
	var out []haLine
	for n, raw := range bytes.Split(data, []byte("\n")) {
		line := haLine{at: Pos{File: file, Line: n + 1}}
		var word []byte
		inWord, col, nextRune := false, 0, 0
		var quote byte
		for i := 0; i < len(raw); i++ {
			c := raw[i]
			if i >= nextRune { // columns count characters, an invalid byte as one
				_, size := utf8.DecodeRune(raw[i:])
				col, nextRune = col+1, i+size
			}
			switch {
			case quote != 0 && c == quote:
				quote = 0
			case quote != '\'' && c == '\\' && i+1 < len(raw):
				i++
				word = append(word, raw[i])
			case quote != 0:
				word = append(word, c)
			case c == '"' || c == '\'':
				quote = c
				if !inWord {
					inWord = true
					if len(line.words) == 0 {
						line.at.Column = col
					}
				}
			case c == ' ' || c == '\t' || c == '\r':
				if inWord {
					line.words, word, inWord = append(line.words, string(word)), nil, false
				}
			case c == '#' && !inWord:
				i = len(raw)
			default:
				if !inWord {
					inWord = true
					if len(line.words) == 0 {
						line.at.Column = col
					}
				}
				word = append(word, c)
			}
		}
		if quote != 0 {
			return nil, &FileError{At: line.at, Err: errors.New("not HAProxy configuration: a quoted string is not closed")}
		}
		if inWord {
			line.words = append(line.words, string(word))
		}
		if len(line.words) > 0 {
			out = append(out, line)
		}
	}
	return out, nil
}

// isHAProxy reports whether data is HAProxy configuration: its first line
// that is not a comment opens a section.
func isHAProxy(data []byte) bool {
	for line := range bytes.Lines(data) {
		fields := bytes.Fields(line)
		if len(fields) == 0 || fields[0][0] == '#' {
			continue
		}
		return slices.Contains(haproxySections, string(fields[0]))
	}
	return false
}

// haSection is a section read: its kind and name, and its lines.
type haSection struct {
	kind, name string
	// from is the defaults section it names with "from" (HAProxy 2.6:
	// "backend NAME from DEFAULTS", "defaults NAME from DEFAULTS"); "" for
	// none.
	from  string
	at    Pos
	lines []haLine
	// defaults is the defaults section it takes what it does not write
	// from: the one its from names, else, for a proxy, the last before
	// it; nil for none.
	defaults *haSection
}

func (f *fileRead) haproxy(data []byte) {
	lines, err := haproxyLines(f.file, data)
	if err != nil {
		f.err = err
		return
	}
	var sections []*haSection
	for _, l := range lines {
		if slices.Contains(haproxySections, l.words[0]) {
			s := &haSection{kind: l.words[0], at: l.at}
			rest := l.words[1:]
			if len(rest) > 0 && rest[0] != "from" {
				s.name, rest = rest[0], rest[1:]
			}
			if len(rest) > 1 && rest[0] == "from" {
				s.from = rest[1]
			}
			sections = append(sections, s)
			continue
		}
		if len(sections) == 0 {
			// isHAProxy splits words at every Unicode blank, HAProxy
			// (and haproxyLines) at spaces and tabs only.
			f.err = &FileError{At: l.at, Err: fmt.Errorf("not HAProxy configuration: %q comes before any section", l.words[0])}
			return
		}
		sections[len(sections)-1].lines = append(sections[len(sections)-1].lines, l)
	}
	// A frontend's http-request and http-response rules apply to the
	// requests it sends to each backend it names, after the backend's
	// own (the frontend's response rules run last).
	fronts := map[string][]haLine{}
	for _, s := range sections {
		if s.kind != "frontend" {
			continue
		}
		for _, l := range s.lines {
			if (l.words[0] == "default_backend" || l.words[0] == "use_backend") && len(l.words) > 1 {
				fronts[l.words[1]] = append(fronts[l.words[1]], haRules(s.lines)...)
			}
		}
	}
	// A section takes the defaults its from names, which must come
	// before it; a proxy without from takes the last before it. A
	// defaults section without from starts from HAProxy's own.
	var seen []*haSection // the defaults sections so far
	for _, s := range sections {
		switch s.kind {
		case "defaults", "frontend", "backend", "listen":
		default:
			continue
		}
		switch {
		case s.from != "":
			if s.defaults = haNamed(seen, s.from); s.defaults == nil {
				f.problems = append(f.problems, Problem{At: s.at, Message: fmt.Sprintf("%s from %s: no defaults section %q comes before it (HAProxy refuses the file); it is read without defaults", strings.TrimSpace(s.kind+" "+s.name), s.from, s.from)})
			}
		case s.kind != "defaults" && len(seen) > 0:
			s.defaults = seen[len(seen)-1]
		}
		switch s.kind {
		case "defaults":
			seen = append(seen, s)
		case "backend", "listen":
			f.haproxyBackend(s, fronts[s.name])
		}
	}
}

// haNamed returns the last of the defaults sections seen named name,
// nil when none is.
func haNamed(seen []*haSection, name string) *haSection {
	for i := len(seen) - 1; i >= 0; i-- {
		if seen[i].name == name {
			return seen[i]
		}
	}
	return nil
}

// haRules are the http-request and http-response lines of lines.
func haRules(lines []haLine) []haLine {
	var out []haLine
	for _, l := range lines {
		if l.words[0] == "http-request" || l.words[0] == "http-response" {
			out = append(out, l)
		}
	}
	return out
}

// haSetting returns the last line of the section, else of its defaults
// section, and of that one's, whose first word is key.
func haSetting(s *haSection, key string) *haLine {
	for sec := s; sec != nil; sec = sec.defaults {
		for i := len(sec.lines) - 1; i >= 0; i-- {
			if l := &sec.lines[i]; l.words[0] == key || (key == "timeout server" && len(l.words) > 2 && l.words[0] == "timeout" && l.words[1] == "server") {
				return l
			}
		}
	}
	return nil
}

// haproxyBackend reads backend (or listen section) s, its defaults
// sections, and the rules of the frontends that send to it.
func (f *fileRead) haproxyBackend(s *haSection, fronts []haLine) {
	res := &Resource{Platform: HAProxy, Kind: HAProxyBackendKind, Name: Text{Value: s.name, At: s.at}, At: s.at, Traffic: AnyTraffic}
	label := s.name
	for _, l := range s.lines {
		if l.words[0] == "server" && len(l.words) > 2 {
			host := l.words[2]
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			if net.ParseIP(host) == nil && host != "" {
				label, _, _ = strings.Cut(host, ".")
			}
			break
		}
	}
	rt := &Route{Resource: res, At: s.at, Backends: []Text{{Value: label, At: s.at}}}
	rules := append(haRules(s.lines), fronts...)
	for _, l := range rules {
		if len(l.words) >= 3 && l.words[0] == "http-request" && l.words[1] == "del-header" {
			rt.Removed = append(rt.Removed, Header{Name: l.words[2], At: l.at, Field: "http-request del-header"})
		}
	}
	retries := defaulted(HAProxyRetries, s.at)
	if l := haSetting(s, "retries"); l != nil && len(l.words) > 1 {
		retries = &setting{Value: l.words[1], From: Origin{At: l.at}}
	}
	retryOn := defaulted(HAProxyRetryOn, s.at)
	if l := haSetting(s, "retry-on"); l != nil {
		retryOn = &setting{Value: strings.Join(l.words[1:], " "), From: Origin{At: l.at}}
	}
	var perTry *setting
	if l := haSetting(s, "timeout server"); l != nil && len(l.words) > 2 {
		perTry = &setting{Value: l.words[2], From: Origin{At: l.at}}
	}
	// disable-l7-retry: every method, or those its condition names.
	var disabled []string
	all := false
	var disabledAt Pos
	for _, l := range rules {
		if len(l.words) < 2 || l.words[0] != "http-request" || l.words[1] != "disable-l7-retry" {
			continue
		}
		methods, every, ok := haMethods(l.words[2:])
		if !ok {
			f.problems = append(f.problems, Problem{At: l.at, Message: "http-request disable-l7-retry with a condition idemlint does not read (it reads none, if METH_X, if { method X }); the retry is judged as if it were not written"})
			continue
		}
		disabledAt, all, disabled = l.at, all || every, append(disabled, methods...)
	}
	var problems []Problem
	rt.Retry, problems = haproxyRetry(retries, retryOn, perTry, all, disabledAt)
	f.problems = append(f.problems, problems...)
	if len(disabled) > 0 && !all {
		connOnly, _ := haproxyRetry(retries, retryOn, perTry, true, disabledAt)
		rt.ByMethod = map[string]Retry{}
		for _, m := range disabled {
			rt.ByMethod[m] = connOnly
		}
	}
	for _, l := range rules {
		if len(l.words) >= 4 && l.words[0] == "http-response" && (l.words[1] == "set-header" || l.words[1] == "add-header") && strings.EqualFold(l.words[2], "Access-Control-Allow-Headers") {
			rt.CORS = &CORS{At: l.at, AllowHeaders: splitList(Text{Value: l.words[3], At: l.at}), AllowHeadersFrom: Origin{At: l.at}}
		}
	}
	res.Routes = []*Route{rt}
	res.rank(pathmatch.Listed)
	f.resources = append(f.resources, res)
}

// haMethods reads a disable-l7-retry condition: none (every method),
// "if METH_X || METH_Y" (or "or"), or "if { method X Y }"; false for
// another. ACLs written side by side must all hold: two methods so never
// do.
func haMethods(cond []string) (methods []string, every, ok bool) {
	if len(cond) == 0 {
		return nil, true, true
	}
	if cond[0] != "if" {
		return nil, false, false
	}
	rest := cond[1:]
	if len(rest) >= 3 && rest[0] == "{" && rest[1] == "method" && rest[len(rest)-1] == "}" {
		return rest[2 : len(rest)-1], false, len(rest) > 3
	}
	var out []string
	for term := range strings.SplitSeq(strings.ReplaceAll(strings.Join(rest, " "), " or ", " || "), "||") {
		var methods []string
		for _, w := range strings.Fields(term) {
			m, ok := strings.CutPrefix(w, "METH_")
			if !ok {
				return nil, false, false
			}
			if !slices.Contains(methods, m) {
				methods = append(methods, m)
			}
		}
		switch len(methods) {
		case 0:
			return nil, false, false
		case 1:
			out = append(out, methods[0])
		}
	}
	return out, false, true
}

// haproxyRetry is the retry of an HAProxy backend: retries are retries
// (attempts in all one more); conn-failure retries a connection never
// established, every other retry-on keyword an answer (or its absence)
// after the request was sent, unless l7Off (disable-l7-retry).
func haproxyRetry(retries, retryOn, perTry *setting, l7Off bool, l7OffAt Pos) (Retry, []Problem) {
	var problems []Problem
	n, err := strconv.Atoi(retries.Value)
	if err != nil || n < 0 {
		problems = append(problems, Problem{At: retries.From.At, Message: "retries is " + strconv.Quote(retries.Value) + ", not a whole number"})
		n, _ = strconv.Atoi(HAProxyRetries.Value)
	}
	out := Retry{Attempts: 1 + n, AttemptsKnown: true, AttemptsFrom: retries.From}
	for _, w := range strings.Fields(retryOn.Value) {
		c := Condition{Platform: w, From: retryOn.From}
		switch {
		case w == "none":
			return Retry{Attempts: 1, AttemptsKnown: true, AttemptsFrom: retryOn.From}, problems
		case w == "conn-failure":
			c.Kind = ConnectError
		case l7Off:
			c.Kind, c.From = ConnectError, Origin{At: l7OffAt}
		case w == "empty-response", w == "response-timeout", w == "junk-response", w == "0rtt-rejected":
			c.Kind = Timeout
		case w == "all-retryable-errors":
			c.Kind = Timeout
			out.add(c)
			for _, code := range []int{500, 502, 503, 504} {
				out.add(Condition{Kind: Status, Low: code, High: code, Platform: w, From: retryOn.From})
			}
			continue
		default:
			code, err := strconv.Atoi(w)
			if err != nil {
				c.Kind = Other
				break
			}
			c.Kind, c.Low, c.High = Status, code, code
		}
		out.add(c)
	}
	if perTry != nil {
		if d, ok := haDuration(perTry.Value); ok {
			out.PerTryTimeout, out.PerTryTimeoutFrom = d, perTry.From
		} else {
			problems = append(problems, Problem{At: perTry.From.At, Message: fmt.Sprintf("timeout server is %q, not an HAProxy time", perTry.Value)})
		}
	}
	return out, problems
}

// haDuration reads an HAProxy time: a number of milliseconds, or with a
// unit us, ms, s, m, h, d.
func haDuration(s string) (time.Duration, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(s[:i])
	units := map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	unit, ok := units[s[i:]]
	if err != nil || !ok || time.Duration(n) > (1<<62)/unit {
		return 0, false
	}
	return time.Duration(n) * unit, true
}
