package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// walkthroughMarker precedes each code block of the documentation the
// walkthrough runs: "<!-- walkthrough: NAME -->" on the line before the
// opening fence, or before a table with a "command" column.
var walkthroughMarker = regexp.MustCompile(`(?m)^<!-- walkthrough: ([a-z0-9-]+) -->\n(` + "```" + `(sh)?\n|\|)`)

// readmeBlocks returns the marked code blocks of every documentation file
// (docFiles) by name, as a reader would paste them: a "sh" block whole, a
// transcript block (no language) only its "$ " lines, without the prompt,
// a table the commands of its "command" column. A name is unique across
// the files.
func readmeBlocks(t *testing.T) map[string]string {
	t.Helper()
	blocks := map[string]string{}
	for _, doc := range docFiles(t) {
		text := doc.text
		for _, m := range walkthroughMarker.FindAllStringSubmatchIndex(text, -1) {
			name := text[m[2]:m[3]]
			var body string
			switch {
			case text[m[4]] == '|':
				table, _, _ := strings.Cut(text[m[4]:], "\n\n")
				body = tableCommands(t, doc.name, name, table)
			default:
				var ok bool
				body, _, ok = strings.Cut(text[m[1]:], "```\n")
				if !ok {
					t.Fatalf("%s: the walkthrough block %q is not closed", doc.name, name)
				}
				if m[6] < 0 {
					var commands []string
					for _, line := range strings.Split(body, "\n") {
						if command, ok := strings.CutPrefix(line, "$ "); ok {
							commands = append(commands, command)
						}
					}
					body = strings.Join(commands, "\n") + "\n"
				}
			}
			if _, dup := blocks[name]; dup {
				t.Fatalf("%s marks a walkthrough block %q, a name already taken", doc.name, name)
			}
			blocks[name] = body
		}
	}
	return blocks
}

var (
	// tableCell is a cell of a Markdown table row, where "\|" is a "|"
	// of the text.
	tableCell = regexp.MustCompile(`(?:[^|\\]|\\.)+`)
	codeSpan  = regexp.MustCompile("`([^`]+)`")
)

// tableCommands returns the commands of the "command" column of table,
// the block name of the file doc, one a line: its code spans that hold a
// space (the others name things, such as a benchmark).
func tableCommands(t *testing.T, doc, name, table string) string {
	t.Helper()
	rows := strings.Split(table, "\n")
	column := slices.IndexFunc(tableCell.FindAllString(rows[0], -1), func(c string) bool { return strings.TrimSpace(c) == "command" })
	if column < 0 || len(rows) < 3 {
		t.Fatalf("%s: the walkthrough table %q has no \"command\" column", doc, name)
	}
	var commands []string
	for _, row := range rows[2:] {
		cells := tableCell.FindAllString(row, -1)
		if column >= len(cells) {
			t.Fatalf("%s: a row of the walkthrough table %q has no command cell: %s", doc, name, row)
		}
		for _, span := range codeSpan.FindAllStringSubmatch(cells[column], -1) {
			if command := strings.ReplaceAll(span[1], `\|`, "|"); strings.Contains(command, " ") {
				commands = append(commands, command)
			}
		}
	}
	return strings.Join(commands, "\n") + "\n"
}

var fencedBlock = regexp.MustCompile("(?ms)^```.*?^```$")

// readmeSpans returns the code spans of the documentation files outside
// their code blocks, in order, with a table's "\|" as "|".
func readmeSpans(t *testing.T) []string {
	t.Helper()
	var spans []string
	for _, doc := range docFiles(t) {
		for _, m := range codeSpan.FindAllStringSubmatch(fencedBlock.ReplaceAllString(doc.text, ""), -1) {
			spans = append(spans, strings.ReplaceAll(m[1], `\|`, "|"))
		}
	}
	return spans
}

// commandFence opens a code block of shell commands.
var commandFence = regexp.MustCompile("^```(sh|shell|bash|console)$")

// unmarkedCommandBlocks returns the file, line and fence of each code
// block of shell commands in the documentation that neither the
// walkthrough runs nor a test named on the line before it checks
// ("<!-- output checked by TestX -->").
func unmarkedCommandBlocks(t *testing.T) []string {
	t.Helper()
	var unmarked []string
	for _, doc := range docFiles(t) {
		lines := strings.Split(doc.text, "\n")
		inBlock := false
		for i, line := range lines {
			if !strings.HasPrefix(line, "```") {
				continue
			}
			opening := !inBlock
			inBlock = !inBlock
			if !opening || !commandFence.MatchString(line) {
				continue
			}
			if i == 0 || !strings.HasPrefix(lines[i-1], "<!-- walkthrough: ") && !strings.HasPrefix(lines[i-1], "<!-- output checked by Test") {
				unmarked = append(unmarked, fmt.Sprintf("%s:%d: %s", doc.name, i+1, line))
			}
		}
	}
	return unmarked
}

// walkthroughScript is the shell script a scenario runs: its prelude,
// its blocks in order as the documentation writes them with the scenario's bounds
// substituted, then its after part. Every command that fails outside a
// condition prints "walkthrough: status N: COMMAND" to stderr, so a
// failure in the middle of a block cannot go unseen.
func walkthroughScript(t *testing.T, blocks map[string]string, sc walkthroughScenario) string {
	t.Helper()
	var blockText []string
	for _, name := range sc.blocks {
		block, ok := blocks[name]
		if !ok {
			t.Fatalf("no documentation file has a block marked <!-- walkthrough: %s -->", name)
		}
		blockText = append(blockText, block)
	}
	if sc.spans != "" {
		found := false
		for _, span := range readmeSpans(t) {
			if strings.Contains(span, sc.spans) {
				blockText, found = append(blockText, span), true
			}
		}
		if !found {
			t.Fatalf("no documentation file has a code span holding %q", sc.spans)
		}
	}
	text := strings.Join(blockText, "\n")
	for _, b := range sc.bound {
		if !strings.Contains(text, b[0]) {
			t.Fatalf("the blocks %q no longer hold %q, which the scenario bounds: update the scenario", sc.blocks, b[0])
		}
		text = strings.ReplaceAll(text, b[0], b[1])
	}
	return strings.Join([]string{`trap 'echo "walkthrough: status $?: $BASH_COMMAND" >&2' ERR`, sc.prelude, text, sc.after}, "\n")
}

// walkthroughScenario is a reader's path through the documentation: the blocks run
// in one shell from a directory holding this repository's files (dir
// below it), what the output must show and the commands that must fail.
type walkthroughScenario struct {
	name   string
	blocks []string
	dir    string   // below the scenario's directory; "" its top
	store  string   // "redis" or "postgres": the scenario needs that server
	want   []string // regular expressions the output (stdout and stderr) must match
	fails  []string // regular expressions, one per "walkthrough: status" line expected, in order
	files  []string // files the blocks must leave, below dir
	// prelude runs before the blocks: what the documentation asks the reader to
	// have (a directory D, a shell's completion directories).
	prelude string
	// after runs after the blocks: checks of what they did.
	after string
	// bound are literal substitutions {the documentation's text, the test's} that
	// keep a long block short (a smaller corpus) or stand in for a
	// placeholder; each must occur in the blocks.
	bound [][2]string
	// spans are the documentation's code spans outside code blocks that
	// contain this text (some commands are named in prose or tables),
	// run one a line after the blocks.
	spans string
	// clone runs the scenario in a copy of the repository's files
	// committed to a new git repository, as a fresh clone is, instead of
	// links to them: for blocks that run git.
	clone bool
}

var walkthroughScenarios = []walkthroughScenario{
	{name: "quick start", blocks: []string{"quick-start"},
		want: []string{`(?m)^\d+ files checked, 0 errors, 0 warnings`}},
	{name: "files that are no documents", blocks: []string{"hostile-files"},
		want: []string{`(?m)^demo/set/pipe.json: error IDL001 cannot read file: not a regular file`,
			`(?m)^demo/set/system: error IDL001 cannot read file: symlink leaves the checked tree`, `(?m)^6 files checked, 2 errors`},
		fails: []string{`^walkthrough: status 1: idemlint check demo/set$`}},
	{name: "outputs", blocks: []string{"outputs"},
		want:  []string{`(?m)^\d+ files checked, 0 errors, 0 warnings`},
		files: []string{"idemlint.sarif", "idemlint.xml"}},
	{name: "standard input", blocks: []string{"stdin"},
		want: []string{`(?m)^1 file checked, 0 errors`}},
	{name: "baseline", blocks: []string{"baseline"},
		want: []string{`(?m)^idemlint: recorded \d+ findings in baseline .*/\.idemlint-baseline\.json$`,
			`(?m)^idemlint: baseline .*/\.idemlint-baseline\.json hid \d+ findings\n\d+ files checked, 0 errors, 0 warnings`}},
	{name: "graph", blocks: []string{"graph"},
		want: []string{`(?m)^orders.create: web -> checkout-bff -> edge-gw -> orders-adapter  \(key x-idempotency-key\)  BROKEN$`,
			`(?m)^1 state-changing chain, 1 broken$`}},
	{name: "init", blocks: []string{"init"},
		want: []string{`(?m)^4 files checked, 0 errors, 0 warnings$`}},
	{name: "first finding", blocks: []string{"first-finding"},
		// The finding README shows, whole.
		want: []string{`(?m)^` + regexp.QuoteMeta(`adapter-inbound-drops-key/04-adapter.json:15:30: error IDL202 orders.create: web -> checkout-bff -> edge-gw -> orders-adapter: add "x-idempotency-key", the chain's key header, to header_to_allow_inbound: this hop drops it`) + `$`,
			`(?m)^4 files checked, 1 error, 0 warnings$`, `(?m)^IDL202 key-survives-chain: error, cross-document rule$`},
		fails: []string{`^walkthrough: status 1: idemlint check adapter-inbound-drops-key$`}},
	{name: "schema", blocks: []string{"schema"},
		files: []string{"schemas-for-editors"}},
	{name: "openapi check", blocks: []string{"openapi-check"}, dir: "sets/rules/IDL302",
		want:  []string{`(?m)^key-not-declared/openapi.yaml:13:5: error IDL302 POST /orders \(createOrder\)`, `(?m)^5 files checked, 1 error, 0 warnings$`},
		fails: []string{`^walkthrough: status 1: idemlint openapi check`}},
	{name: "init from openapi", blocks: []string{"init-from-openapi"}, dir: "sets/rules/IDL301",
		want: []string{`(?m)^4 files checked, 0 errors, 0 warnings$`, `(?m)^5 files checked, 0 errors, 0 warnings$`}},
	{name: "serve and conform", blocks: []string{"serve-conform"},
		want: []string{`(?m)^\d+ probes: \d+ passed, 0 failed, \d+ skipped`}},
	{name: "probes", blocks: []string{"probes"},
		want: []string{`(?m)^CF18 `, `(?m)^CF07 `}},
	{name: "replicas on two stores", blocks: []string{"two-stores"},
		want:  []string{`(?m)^FAIL CF18 `},
		fails: []string{`^walkthrough: status 1: idemlint conform`}},
	{name: "replicas on Redis", blocks: []string{"redis-start", "replicas", "replicas-stop", "redis-stop"}, store: "redis"},
	{name: "replicas on PostgreSQL", blocks: []string{"postgres-start", "replicas", "replicas-stop", "postgres-stop"}, store: "postgres"},
	{name: "install", blocks: []string{"install"},
		prelude: `export GOBIN=$(mktemp -d)`, after: `"$GOBIN/idemlint" version; ./idemlint version`,
		want: []string{`(?m)^idemlint .*\n(.*\n)*idemlint `}, files: []string{"idemlint"}},
	{name: "only what changed", blocks: []string{"new-from-rev"}, clone: true,
		// After the commit the reader's, one broken document: only its
		// set's findings are shown.
		after: `sed -i 's/"x-idempotency-key"/"x-idempotency-kee"/' fixtures/valid/orders-basic/02-bff-to-gateway.json
go run ./cmd/idemlint check --new-from-rev HEAD fixtures/valid`,
		want: []string{`(?m)^\d+ files checked, 0 errors, 0 warnings`,
			`(?m)^fixtures/valid/orders-basic/02-bff-to-gateway.json:\d+:\d+: error IDL\d+ `},
		fails: []string{`^walkthrough: status 1: go run ./cmd/idemlint check --new-from-rev HEAD fixtures/valid$`}},
	{name: "as built", blocks: []string{"as-built"},
		bound: [][2]string{{"deploy/rendered/", "fixtures/as-built/shop/fixed/"},
			{"mesh.yaml", "fixtures/as-built/shop/broken/commerce-adapter.yaml"},
			{"boundaries/", "fixtures/as-built/shop/boundaries/"}},
		want:  []string{`(?m)^4 files checked, 0 errors, 0 warnings$`, `(?m)^fixtures/as-built/shop/broken/commerce-adapter.yaml:\d+:\d+: error IDL401 `},
		fails: []string{`^walkthrough: status 1: idemlint check --as-built fixtures/as-built/shop/broken/commerce-adapter.yaml --mesh istio`}},
	{name: "shell completion", spans: "idemlint completion ",
		// What a reader's shells have: a home, zsh's function path
		// (fpath[1] is its first directory in zsh, the second in bash),
		// fish's completion directory.
		prelude: `export HOME=$(mktemp -d) && mkdir -p "$HOME/zsh" ~/.config/fish/completions && fpath=(unused "$HOME/zsh")`,
		// The synopsis names no shell.
		bound: [][2]string{{"idemlint completion SHELL\n", ""}},
		after: `complete -p idemlint
head -n 1 "$HOME/zsh/_idemlint" ~/.config/fish/completions/idemlint.fish`,
		want: []string{`(?m)^complete .*-F \S+ idemlint$`, `(?m)^#compdef idemlint$`, `(?m)^# fish completion for idemlint`}},
	{name: "crash test", blocks: []string{"crash"},
		want: []string{`(?m)^walkthrough: go test checked, not run: ./reference/redisstore$`}},
	{name: "failover and capacity", blocks: []string{"failover", "capacity"},
		want: []string{`(?m)^walkthrough: go test checked, not run: ./reference/redisstore$`, `(?m)^walkthrough: go test checked, not run: ./reference/pgstore$`,
			`(?m)^walkthrough: go test checked, not run: ./reference/redisstore/$`}},
	{name: "performance", blocks: []string{"performance", "performance-table"}, clone: true,
		prelude: `D=$(mktemp -d)
printf 'openapi: 3.0.3\ninfo: {title: corpus, version: "1"}\npaths:\n  /orders:\n    post:\n      responses: {"201": {description: created}}\n' > "$D/API.yaml"
idemlint serve --policy fixtures/valid/orders-basic/04-adapter.json --addr 127.0.0.1:0 > "$D/serve.log" 2>&1 &
until grep -q '^listening on ' "$D/serve.log"; do sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$D/serve.log")`,
		after: `kill %1 && wait`,
		// Corpora of 20 flows, not 2,500; bash's time for GNU time, which
		// may be missing (a note on it is no command); npm ci needs
		// Node.js and the network: the lock file it reads must be there;
		// the description is one of a single operation, not the 2.8 MB
		// one the benchmark writes.
		bound: [][2]string{{"-flows 2500", "-flows 20"}, {"\n/usr/bin/time -v\n", "\n"},
			{"/usr/bin/time -v ", "time -p "}, {"/usr/bin/time -p ", "time -p "}, {"DIR", "$D/uniform"},
			{"npm ci", "test -f package-lock.json"}, {"API.yaml", "$D/API.yaml"}},
		want: []string{`(?m)^\d+ probes: \d+ passed, 0 failed`, `(?m)^idemlint: recorded \d+ findings in baseline`,
			`(?m)^walkthrough: go test checked, not run: ./cmd/idemlint/internal/lsp$`},
		// The corpora and the fixture sets have defects: check exits 1.
		fails: []string{`^walkthrough: status 1: \$D/idemlint check --no-config \$D/varied > /dev/null$`,
			`^walkthrough: status 1: \$D/idemlint check --no-config \$D/uniform > /dev/null$`,
			`^walkthrough: status 1: \$D/idemlint check \$D/sets$`,
			`^walkthrough: status 1: \$D/idemlint check -o github`,
			`^walkthrough: status 1: \$D/idemlint openapi check`}},
	{name: "development", blocks: []string{"development"}, clone: true,
		prelude: `D=$(mktemp -d)`,
		// CI itself is only parsed; a new fixture set is one extracted
		// under another name, its golden to be filled in.
		bound: [][2]string{{"DIR", "$D/sets"}, {"bash .ci/run", "bash -n .ci/run"},
			{"go run ./fixtures/sets archive fixtures/rules/IDLnnn/NAME",
				"cp -r $D/sets/rules/IDL102/outbound-missing-key fixtures/rules/IDL102/walkthrough-case && " +
					"touch fixtures/rules/IDL102/walkthrough-case/findings.golden && go run ./fixtures/sets archive fixtures/rules/IDL102/walkthrough-case"}},
		files: []string{"fixtures/rules/IDL102/walkthrough-case.txtar"}},
}

// TestREADMEWalkthrough runs the commands of README.md, CONTRIBUTING.md
// and docs/*.md (docFiles) as a newcomer would, from a directory holding
// this repository's files, so that they cannot drift from what idemlint
// does. Each scenario runs in its own process group, killed at the end
// with what it started, and has 10 minutes, only against a hang: builds
// on a loaded machine take minutes.
func TestREADMEWalkthrough(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	blocks := readmeBlocks(t)
	for _, block := range unmarkedCommandBlocks(t) {
		t.Errorf("%s has no <!-- walkthrough: NAME --> marker on the line before it: mark it and run it in a scenario", block)
	}
	used := map[string]bool{}
	for _, sc := range walkthroughScenarios {
		for _, name := range sc.blocks {
			used[name] = true
		}
	}
	for name := range blocks {
		if !used[name] {
			t.Errorf("the documentation marks the block %q, which no scenario runs", name)
		}
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range walkthroughScenarios {
		t.Run(sc.name, func(t *testing.T) {
			if sc.store != "" {
				storeInstalled(t, sc.store)
			}
			var user *syscall.Credential
			if sc.store == "postgres" {
				// initdb refuses root, as docs/engine.md says: root runs the
				// scenario as the user the store tests use.
				if user, err = testserver.ServerUser(); err != nil {
					t.Fatal(err)
				}
			}
			runScenario(t, repo, walkthroughScript(t, blocks, sc), sc, user)
		})
	}
}

// storeInstalled skips the test when the server of store is not installed,
// unless CI=true.
func storeInstalled(t *testing.T, store string) {
	t.Helper()
	var missing string
	switch store {
	case "redis":
		if _, err := exec.LookPath("redis-server"); err != nil {
			missing = "redis-server is not installed"
		}
	case "postgres":
		if initdb, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(initdb) == 0 {
			missing = "PostgreSQL is not installed (Debian: apt-get install postgresql)"
		}
	}
	if _, err := exec.LookPath("curl"); err != nil && missing == "" {
		missing = "curl, which the demo's requests use, is not installed"
	}
	if missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but %s (.ci/run installs it)", missing)
	}
	t.Skip(missing)
}

// runScenario runs script as sc says, as user when it is not nil.
func runScenario(t *testing.T, repo, script string, sc walkthroughScenario, user *syscall.Credential) {
	top := t.TempDir()
	files, listed := repositoryFiles(t, repo)
	if sc.clone {
		if !listed {
			t.Skip("not a git checkout with git installed: the scenario needs a clone")
		}
		cloneInto(t, repo, files, top)
	} else {
		linked := map[string]bool{}
		for _, file := range files {
			entry, _, _ := strings.Cut(file, "/")
			if !linked[entry] {
				linked[entry] = true
				if err := os.Symlink(filepath.Join(repo, entry), filepath.Join(top, entry)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if strings.HasPrefix(sc.dir, "sets/") {
		cases, err := fixtures.Cases()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if err := c.Materialize(filepath.Join(top, "sets", filepath.FromSlash(c.Dir))); err != nil {
				t.Fatal(err)
			}
		}
	}
	// mktemp -d makes its directories here, so the daemons they hold
	// are found and stopped however the script ended.
	tmp := t.TempDir()
	t.Cleanup(func() { stopDaemons(t, tmp) })
	path := walkthroughGoDir(t) + string(filepath.ListSeparator) + os.Getenv("PATH")
	if user != nil {
		path = shareWith(t, user, top, tmp) + string(filepath.ListSeparator) + path
	}
	realGo, err := exec.LookPath("go")
	if err != nil {
		realGo = "go" // a go command then fails, and says so
	}
	// The reader's environment holds none of the variables the documentation sets
	// for the tests, so that the walkthrough's go test sees only those.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IDEMLINT_") {
			env = append(env, kv)
		}
	}
	env = append(env, "TMPDIR="+tmp, "NO_COLOR=1", "PATH="+path, walkthroughRealGo+"="+realGo)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = filepath.Join(top, filepath.FromSlash(sc.dir))
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: user}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the script left running
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) || ctx.Err() != nil {
		t.Fatalf("the walkthrough did not finish: %v\nscript:\n%s\noutput:\n%s", err, script, out)
	}
	output := string(out)
	var failures []string
	for _, line := range strings.Split(output, "\n") {
		if strings.HasPrefix(line, "walkthrough: status ") {
			failures = append(failures, line)
		}
	}
	ok := len(failures) == len(sc.fails)
	for i := 0; ok && i < len(failures); i++ {
		ok = regexp.MustCompile(sc.fails[i]).MatchString(failures[i])
	}
	if !ok {
		t.Errorf("commands failed: %q, want failures matching %q", failures, sc.fails)
	}
	for _, want := range sc.want {
		if !regexp.MustCompile(want).MatchString(output) {
			t.Errorf("output lacks %s", want)
		}
	}
	for _, file := range sc.files {
		if _, err := os.Stat(filepath.Join(cmd.Dir, file)); err != nil {
			t.Errorf("the walkthrough left no %s: %v", file, err)
		}
	}
	if sc.store != "" {
		checkReplicaDemo(t, output)
	}
	if t.Failed() {
		t.Logf("script:\n%s\noutput:\n%s", script, output)
	}
}

var (
	replicaStatus = regexp.MustCompile(`(?m)^port \d+: (\d{3})$`)
	replicaAnswer = regexp.MustCompile(`(?m)^\{"id":.*\}$`)
	replicaCount  = regexp.MustCompile(`(?m)^\{"count":(\d+)\}$`)
)

// checkReplicaDemo holds the demo to what docs/engine.md promises: one
// execution, three equal answers.
func checkReplicaDemo(t *testing.T, output string) {
	t.Helper()
	statuses := replicaStatus.FindAllStringSubmatch(output, -1)
	answers := replicaAnswer.FindAllString(output, -1)
	if len(statuses) != 3 || len(answers) != 3 {
		t.Fatalf("%d statuses and %d answers, want 3 of each", len(statuses), len(answers))
	}
	for i := range answers {
		if statuses[i][1] != "201" || answers[i] != answers[0] {
			t.Errorf("statuses %q, answers %q: want three equal 201 answers", statuses, answers)
			break
		}
	}
	counts := replicaCount.FindAllStringSubmatch(output, -1)
	executions := 0
	for _, c := range counts {
		n, _ := strconv.Atoi(c[1]) // digits, by the expression
		executions += n
	}
	if len(counts) != 3 || executions != 1 {
		t.Errorf("execution counts %q: want three that sum to 1", counts)
	}
}

// repositoryFiles lists the files of the repository at repo that a clone
// holds: tracked or new and not ignored, and true, with git; without it
// (a source archive), every entry of repo but .git, and false.
func repositoryFiles(t *testing.T, repo string) ([]string, bool) {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err == nil {
		var files []string
		for _, file := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			// A file deleted in the work tree is still listed as cached.
			if _, err := os.Lstat(filepath.Join(repo, file)); err == nil {
				files = append(files, file)
			}
		}
		return files, true
	}
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if e.Name() != ".git" {
			files = append(files, e.Name())
		}
	}
	return files, false
}

// cloneInto copies files of repo to top and commits them there to a new
// git repository: a fresh clone of the work tree under test.
func cloneInto(t *testing.T, repo string, files []string, top string) {
	t.Helper()
	for _, file := range files {
		from, to := filepath.Join(repo, file), filepath.Join(top, file)
		info, err := os.Stat(from)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"},
		{"-c", "user.name=walkthrough", "-c", "user.email=walkthrough@example.com", "commit", "-q", "-m", "clone"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = top
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// walkthroughGoDir returns a directory holding the walkthrough's "go",
// which runs walkthrough-go (see walkthroughGo).
func walkthroughGoDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte("#!/bin/sh\nexec walkthrough-go \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shareWith gives user the scenario's directories and a copy of idemlint
// (this test binary, which TestMain runs as idemlint by its name) that
// user can run, and returns the directory of that copy.
func shareWith(t *testing.T, user *syscall.Credential, dirs ...string) string {
	t.Helper()
	bin := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "idemlint"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range append(dirs, bin) {
		// t.TempDir's parent is private to us; the user needs to pass it.
		if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range dirs {
		if err := os.Chown(dir, int(user.Uid), int(user.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// stopDaemons kills the Redis and PostgreSQL servers whose pid files lie
// under dir: those the script started and did not stop.
func stopDaemons(t *testing.T, dir string) {
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (d.Name() != "redis.pid" && d.Name() != "postmaster.pid") {
			return nil
		}
		data, _ := os.ReadFile(path)
		line, _, _ := strings.Cut(string(data), "\n")
		if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && pid > 0 {
			t.Logf("stopping %s's server, pid %d", path, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return nil
	})
}
