package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"go.yaml.in/yaml/v4"

	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// TestActionAndHooksAsRunner runs what an adopter runs, as a GitHub runner
// runs it: not as root, from a fresh clone of idemlint, on a repository
// holding a boundary set beside the JSON every web project has (a
// tsconfig.json and editor settings with comments, a package.json, a JSON
// array). The composite action's steps run in order as the runner runs
// them, with the workflow inputs of docs/integrations.md and a Go build cache that starts
// cold; then the pre-commit hooks with its .pre-commit-config.yaml.
// Both pass on the repository and fail once a document breaks. As root,
// the test runs them as the user postgres or nobody; the steps that use
// other actions (the cache, the SARIF upload) stand in as
// actionStandIns says. Needs git, and pre-commit for the hooks.
//
// The cold build costs about 90 s of CPU, more than a test of go test
// ./... may: it runs with IDEMLINT_RUNNER=1, which .ci/run sets for it.
func TestActionAndHooksAsRunner(t *testing.T) {
	if os.Getenv(runnerEnv) != "1" {
		t.Skipf("%s=1 runs it (.ci/run does): it builds idemlint from a cold Go cache as a runner would, about 90 s of CPU", runnerEnv)
	}
	for _, tool := range []string{"bash", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed: the action builds idemlint with it")
	}
	user, err := testserver.ServerUser()
	if err != nil {
		t.Skip(err)
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, listed := repositoryFiles(t, repo)
	if !listed {
		t.Skip("not a git checkout: the action is used from a clone")
	}
	top := t.TempDir()
	if err := os.Chmod(filepath.Dir(top), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(top, 0o755); err != nil {
		t.Fatal(err)
	}
	// Module caches are read-only: make them removable for t.TempDir.
	t.Cleanup(func() {
		_ = filepath.WalkDir(top, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(path, 0o755)
			}
			return nil
		})
	})
	r := &runner{t: t, user: user, top: top, goBin: goBin}
	for _, dir := range []string{"idemlint", "workspace", "home", "temp", "proxy"} {
		r.mkdir(dir)
	}
	cloneInto(t, repo, files, r.path("idemlint"))
	r.moduleProxy(repo)
	r.writeWorkspace()
	if user != nil {
		r.chownAll()
	}
	integrations, err := os.ReadFile(filepath.Join(repo, "docs", "integrations.md"))
	if err != nil {
		t.Fatal(err)
	}
	inputs := readmeWorkflowInputs(t, string(integrations))

	t.Run("action", func(t *testing.T) {
		r.t = t
		// The defaults (paths "."): the ordinary JSON is skipped and
		// counted. The build starts from a cold cache.
		job := r.runAction(nil, map[string]string{"github.event_name": "push"})
		if !job.passed || job.outputs["check"]["exit-code"] != "0" {
			t.Fatalf("the job failed on a clean repository (exit-code %q):\n%s", job.outputs["check"]["exit-code"], job.log)
		}
		if !regexp.MustCompile(`(?m)^7 files checked, 0 errors, 0 warnings, 3 skipped: not boundary documents$`).MatchString(job.log) {
			t.Errorf("the check's summary line is not in the log:\n%s", job.log)
		}
		// Built from the clone into a directory of its own: the job's Go and
		// environment stay as they were.
		if want := []string{r.path("temp", "idemlint-bin")}; !slices.Equal(job.path, want) {
			t.Errorf("GITHUB_PATH got %q, want %q", job.path, want)
		}
		if job.env != "" {
			t.Errorf("the action wrote to GITHUB_ENV: %q", job.env)
		}
		if _, err := os.Stat(r.path("workspace", "idemlint.sarif")); err != nil {
			t.Errorf("no SARIF log: %v", err)
		}
		// Code scanning is not enabled here: the upload fails, and says so
		// in a notice, not in the job's result.
		if !strings.Contains(job.log, "::notice title=idemlint::SARIF upload to code scanning failed") {
			t.Errorf("no notice of the failed upload:\n%s", job.log)
		}
		if !strings.Contains(job.summary, "| 7 |") {
			t.Errorf("the job summary does not count the files:\n%s", job.summary)
		}

		// The workflow of docs/integrations.md.
		job = r.runAction(inputs, map[string]string{"github.event_name": "push"})
		if !job.passed || !regexp.MustCompile(`(?m)^4 files checked, 0 errors, 0 warnings$`).MatchString(job.log) {
			t.Fatalf("the documented workflow failed on a clean repository:\n%s", job.log)
		}

		// A pull request from a fork, with a broken document: the job
		// fails with the finding annotated, and skips the upload.
		r.breakSet(t)
		defer r.mendSet(t)
		job = r.runAction(inputs, map[string]string{"github.event_name": "pull_request",
			"github.event.pull_request.head.repo.full_name": "someone/fork"})
		if job.passed || job.outputs["check"]["exit-code"] != "1" {
			t.Fatalf("the job passed on a broken set (exit-code %q):\n%s", job.outputs["check"]["exit-code"], job.log)
		}
		for _, want := range []string{`(?m)^::error file=boundaries/02-bff-to-gateway.json,line=\d+,col=\d+,title=IDL\d+::`,
			`(?m)^::notice title=idemlint::SARIF not uploaded to code scanning: this pull request's token is read-only`} {
			if !regexp.MustCompile(want).MatchString(job.log) {
				t.Errorf("the log lacks %s:\n%s", want, job.log)
			}
		}
	})

	t.Run("pre-commit", func(t *testing.T) {
		r.t = t
		if _, err := exec.LookPath("pre-commit"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI=true but pre-commit is not installed (.ci/run installs it)")
			}
			t.Skip("pre-commit is not installed: apt-get install pre-commit to run this test")
		}
		config := readmePreCommitConfig(t, string(integrations), r.path("idemlint"), r.git("idemlint", "rev-parse", "HEAD"))
		if err := os.WriteFile(r.path("workspace", ".pre-commit-config.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		r.chown(r.path("workspace", ".pre-commit-config.yaml"))
		r.git("workspace", "add", "-A")
		// The baseline of that config, recorded as the "Adopting" section
		// of docs/configuration.md says.
		out, err := r.run("workspace", nil, r.path("temp", "idemlint-bin", "idemlint"), "check", "--write-baseline", ".idemlint-baseline.json", "boundaries")
		if err != nil {
			t.Fatalf("idemlint check --write-baseline: %v\n%s", err, out)
		}
		r.git("workspace", "add", "-A")
		// The golang hook builds with the modules and the build cache the
		// action's build left, as a runner's warm cache gives them.
		goDir := r.path("temp", "idemlint-go")
		preCommit := []string{"PRE_COMMIT_HOME=" + r.path("home", "pre-commit"),
			"GOMODCACHE=" + filepath.Join(goDir, "mod"), "GOCACHE=" + filepath.Join(goDir, "build")}
		// The hook's defaults (the repository, "."), as pre-commit try-repo
		// tries them: the ordinary JSON is skipped.
		out, err = r.run("workspace", preCommit, "pre-commit", "try-repo", r.path("idemlint"), "idemlint", "--all-files")
		if err != nil || !regexp.MustCompile(`(?m)^idemlint\.+Passed$`).MatchString(out) {
			t.Fatalf("pre-commit try-repo with the hook's defaults: %v\n%s", err, out)
		}
		out, err = r.run("workspace", preCommit, "pre-commit", "run", "--all-files")
		if err != nil || !regexp.MustCompile(`(?m)^idemlint\.+Passed$`).MatchString(out) {
			t.Fatalf("pre-commit run with the documented configuration: %v\n%s", err, out)
		}
		r.breakSet(t)
		defer r.mendSet(t)
		r.git("workspace", "add", "-A")
		out, err = r.run("workspace", preCommit, "pre-commit", "run", "--all-files")
		if err == nil || !regexp.MustCompile(`(?m)^idemlint\.+Failed$`).MatchString(out) ||
			!regexp.MustCompile(`(?m)^boundaries/02-bff-to-gateway.json:\d+:\d+: error IDL\d+ `).MatchString(out) {
			t.Errorf("pre-commit run on a broken set: %v, want it to fail with the finding\n%s", err, out)
		}
	})
}

const runnerEnv = "IDEMLINT_RUNNER"

// runner runs the action's steps and the hooks as a GitHub runner would,
// as user (nil: the current user, who is not root) in directories below
// top: idemlint (the action's clone), workspace (the adopter's
// repository), home, temp (RUNNER_TEMP) and proxy (the modules the build
// needs, as GOPROXY serves them: the runner's network).
type runner struct {
	t     *testing.T
	user  *syscall.Credential
	top   string
	goBin string
}

func (r *runner) path(elem ...string) string {
	return filepath.Join(append([]string{r.top}, elem...)...)
}

func (r *runner) mkdir(dir string) {
	if err := os.MkdirAll(r.path(dir), 0o755); err != nil {
		r.t.Fatal(err)
	}
}

func (r *runner) chown(path string) {
	if r.user == nil {
		return
	}
	if err := os.Lchown(path, int(r.user.Uid), int(r.user.Gid)); err != nil {
		r.t.Fatal(err)
	}
}

// chownAll gives the runner's user everything below top, as a runner's
// checkouts and directories are its own.
func (r *runner) chownAll() {
	err := filepath.WalkDir(r.top, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(r.user.Uid), int(r.user.Gid))
	})
	if err != nil {
		r.t.Fatal(err)
	}
}

// env is the environment of every command the runner runs: what a runner
// sets, a PATH of the system's directories and Go's, and the module
// proxy in place of the network.
func (r *runner) env(extra ...string) []string {
	env := []string{"PATH=" + r.systemPath(), "HOME=" + r.path("home"), "LANG=C.UTF-8", "CI=true", "GITHUB_ACTIONS=true",
		"GOPROXY=file://" + r.path("proxy"), "NO_COLOR=1"}
	// Later entries win: extra may set PATH.
	return append(env, extra...)
}

// systemPath is the runner's PATH before any step adds to it.
func (r *runner) systemPath() string {
	return strings.Join([]string{filepath.Dir(r.goBin), "/usr/local/bin", "/usr/bin", "/bin"}, string(filepath.ListSeparator))
}

// run runs program with args in dir (below top) as the runner's user and
// returns its combined output.
func (r *runner) run(dir string, extra []string, program string, args ...string) (string, error) {
	// Only against a hang: a cold build on a loaded machine takes minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Dir = r.path(dir)
	cmd.Env = r.env(extra...)
	// In a process group of its own, so that a timeout ends what it started
	// (pre-commit's go install) too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.user, Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		r.t.Fatalf("%s %s did not finish in 15 minutes:\n%s", program, strings.Join(args, " "), out)
	}
	return string(out), err
}

// git runs git in dir as the runner's user and returns its trimmed output.
func (r *runner) git(dir string, args ...string) string {
	r.t.Helper()
	out, err := r.run(dir, []string{"GIT_AUTHOR_NAME=runner", "GIT_AUTHOR_EMAIL=runner@example.com",
		"GIT_COMMITTER_NAME=runner", "GIT_COMMITTER_EMAIL=runner@example.com"}, "git", args...)
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

// moduleProxy copies the modules of idemlint's build list from this
// machine's module cache to proxy, laid out as a GOPROXY=file:// URL
// serves them: the cold build downloads them from there.
func (r *runner) moduleProxy(repo string) {
	cmd := exec.Command(r.goBin, "list", "-m", "-f", "{{if .Version}}{{.Path}} {{.Version}}{{end}}", "all")
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("go list -m all: %v", err)
	}
	downloads := filepath.Join(goEnv("GOMODCACHE"), "cache", "download")
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, version, _ := strings.Cut(line, " ")
		dir := filepath.Join(escapeModulePath(path), "@v")
		for _, ext := range []string{".info", ".mod", ".zip"} {
			data, err := os.ReadFile(filepath.Join(downloads, dir, version+ext))
			if err != nil {
				continue // a module of which the build reads only go.mod has no zip
			}
			if err := os.MkdirAll(r.path("proxy", dir), 0o755); err != nil {
				r.t.Fatal(err)
			}
			if err := os.WriteFile(r.path("proxy", dir, version+ext), data, 0o644); err != nil {
				r.t.Fatal(err)
			}
		}
	}
}

// escapeModulePath is a module path as the module cache and proxies
// write it: each upper-case letter as "!" and its lower case.
func escapeModulePath(path string) string {
	var b strings.Builder
	for _, c := range path {
		if unicode.IsUpper(c) {
			b.WriteByte('!')
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	return b.String()
}

// runnerWorkspaceFiles is the adopter's repository: a boundary set in
// boundaries/ (the documented workflow checks that directory) and the JSON of
// an ordinary web project, which the action's default paths "." would
// meet too.
var runnerWorkspaceFiles = map[string]string{
	"tsconfig.json":          "{\n  // JSON with comments, as tsc reads it\n  \"compilerOptions\": {\"strict\": true,},\n}\n",
	"package.json":           `{"name": "web", "private": true, "scripts": {"build": "tsc"}}` + "\n",
	".vscode/settings.json":  "{\n  /* the editor's settings */\n  \"editor.tabSize\": 2,\n}\n",
	"web/fixtures/list.json": `[{"id": 1}, {"id": 2}]` + "\n",
}

// writeWorkspace writes the adopter's repository and makes it a git
// repository, as actions/checkout leaves it.
func (r *runner) writeWorkspace() {
	set := filepath.Join(r.path("idemlint"), "fixtures", "valid", "orders-basic")
	docs, err := filepath.Glob(filepath.Join(set, "*.json"))
	if err != nil || len(docs) == 0 {
		r.t.Fatalf("no documents in %s: %v", set, err)
	}
	files := map[string]string{}
	for name, text := range runnerWorkspaceFiles {
		files[name] = text
	}
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			r.t.Fatal(err)
		}
		files["boundaries/"+filepath.Base(doc)] = string(data)
	}
	for name, text := range files {
		path := r.path("workspace", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = r.path("workspace")
		if out, err := cmd.CombinedOutput(); err != nil {
			r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// brokenKeyHeader is the key header the set's BFF document stops
// forwarding when breakSet breaks it.
const brokenKeyHeader = `"x-idempotency-key"`

func (r *runner) bffDocument() string {
	return r.path("workspace", "boundaries", "02-bff-to-gateway.json")
}

// breakSet misspells the key header in the BFF document's allowlists, so
// that the chain drops the key: errors.
func (r *runner) breakSet(t *testing.T) {
	data, err := os.ReadFile(r.bffDocument())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), brokenKeyHeader) {
		t.Fatalf("%s does not name %s", r.bffDocument(), brokenKeyHeader)
	}
	broken := strings.ReplaceAll(string(data), brokenKeyHeader, `"x-idempotency-kee"`)
	if err := os.WriteFile(r.bffDocument(), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (r *runner) mendSet(t *testing.T) {
	data, err := os.ReadFile(r.bffDocument())
	if err != nil {
		t.Fatal(err)
	}
	mended := strings.ReplaceAll(string(data), `"x-idempotency-kee"`, brokenKeyHeader)
	if err := os.WriteFile(r.bffDocument(), []byte(mended), 0o644); err != nil {
		t.Fatal(err)
	}
}

// compositeAction is what the runner reads of action.yml.
type compositeAction struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Using string          `yaml:"using"`
		Steps []compositeStep `yaml:"steps"`
	} `yaml:"runs"`
}

type compositeStep struct {
	Name             string            `yaml:"name"`
	ID               string            `yaml:"id"`
	If               string            `yaml:"if"`
	Shell            string            `yaml:"shell"`
	Run              string            `yaml:"run"`
	Uses             string            `yaml:"uses"`
	WorkingDirectory string            `yaml:"working-directory"`
	ContinueOnError  bool              `yaml:"continue-on-error"`
	Env              map[string]string `yaml:"env"`
	With             map[string]string `yaml:"with"`
}

// actionStandIns are the outcomes of the steps that use other actions,
// by the action's name: the cache restores nothing (a first run, whose
// build starts cold), and the SARIF upload fails, as it does where code
// scanning is not enabled.
var actionStandIns = map[string]string{
	"actions/cache":                     "success",
	"github/codeql-action/upload-sarif": "failure",
}

// actionJob is what one run of the action left: whether the job passed,
// the steps' outputs by id, the log, the directories added to GITHUB_PATH,
// what was written to GITHUB_ENV and the job summary.
type actionJob struct {
	passed  bool
	outputs map[string]map[string]string
	log     string
	path    []string
	env     string
	summary string
}

// runAction runs the composite action's steps with the given inputs (the
// rest their defaults) and github context values, as the runner runs a
// composite action: in order, each "if" evaluated, a failed step failing
// the job and skipping the later steps unless it may continue on error.
func (r *runner) runAction(with, github map[string]string) actionJob {
	t := r.t
	t.Helper()
	data, err := os.ReadFile(r.path("idemlint", ".github", "actions", "idemlint", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action compositeAction
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if action.Runs.Using != "composite" {
		t.Fatalf("action.yml runs %q, not composite", action.Runs.Using)
	}
	inputs := map[string]string{}
	for name, input := range action.Inputs {
		inputs[name] = input.Default
	}
	for name, value := range with {
		if _, ok := action.Inputs[name]; !ok {
			t.Fatalf("the action has no input %q", name)
		}
		inputs[name] = value
	}
	values := map[string]string{
		"runner.temp": r.path("temp"), "runner.os": "Linux", "runner.arch": runnerArch(),
		"github.action_path": r.path("idemlint", ".github", "actions", "idemlint"),
		"github.repository":  "adopter/shop", "github.actor": "adopter",
		"github.workspace": r.path("workspace"),
		"github.event.pull_request.head.repo.full_name": "",
	}
	for name, value := range github {
		values[name] = value
	}
	for name, value := range inputs {
		values["inputs."+name] = value
	}
	job := actionJob{passed: true, outputs: map[string]map[string]string{}}
	var log strings.Builder
	summary, pathFile, envFile := r.path("temp", "summary.md"), r.path("temp", "github-path"), r.path("temp", "github-env")
	for _, file := range []string{summary, pathFile, envFile} {
		if err := os.WriteFile(file, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		r.chown(file)
	}
	for i, step := range action.Runs.Steps {
		expand := func(text string) string { return expandExpressions(t, text, values) }
		cond := "success()"
		if step.If != "" {
			cond = step.If
		}
		if !job.passed || !evalCondition(t, cond, values) {
			fmt.Fprintf(&log, "## %s: skipped\n", step.Name)
			continue
		}
		outcome := "success"
		outputFile := r.path("temp", fmt.Sprintf("output-%d", i))
		if step.Uses != "" {
			name, _, _ := strings.Cut(step.Uses, "@")
			stand, ok := actionStandIns[name]
			if !ok {
				t.Fatalf("step %q uses %s, for which the test has no stand-in", step.Name, step.Uses)
			}
			outcome = stand
			fmt.Fprintf(&log, "## %s: %s stands in as %s\n", step.Name, step.Uses, outcome)
		} else {
			if step.Shell != "bash" {
				t.Fatalf("step %q runs shell %q; the test runs bash", step.Name, step.Shell)
			}
			script := r.path("temp", fmt.Sprintf("step-%d.sh", i))
			if err := os.WriteFile(script, []byte(expand(step.Run)), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(outputFile, nil, 0o666); err != nil {
				t.Fatal(err)
			}
			r.chown(script)
			r.chown(outputFile)
			dir, err := filepath.Rel(r.top, r.path("workspace"))
			if err != nil {
				t.Fatal(err)
			}
			if step.WorkingDirectory != "" {
				if dir, err = filepath.Rel(r.top, expand(step.WorkingDirectory)); err != nil {
					t.Fatal(err)
				}
			}
			extra := []string{"RUNNER_OS=Linux", "RUNNER_ARCH=" + runnerArch(), "RUNNER_TEMP=" + r.path("temp"),
				"GITHUB_WORKSPACE=" + r.path("workspace"), "GITHUB_OUTPUT=" + outputFile, "GITHUB_PATH=" + pathFile,
				"GITHUB_ENV=" + envFile, "GITHUB_STEP_SUMMARY=" + summary}
			if len(job.path) > 0 {
				extra = append(extra, "PATH="+strings.Join(append(slices.Clone(job.path), r.systemPath()), string(filepath.ListSeparator)))
			}
			for name, value := range step.Env {
				extra = append(extra, name+"="+expand(value))
			}
			// The runner's bash: "bash --noprofile --norc -eo pipefail {0}".
			out, err := r.run(dir, extra, "bash", "--noprofile", "--norc", "-eo", "pipefail", script)
			fmt.Fprintf(&log, "## %s\n%s", step.Name, out)
			if err != nil {
				outcome = "failure"
				fmt.Fprintf(&log, "## %s: %v\n", step.Name, err)
			}
			job.path = readLines(t, pathFile)
			slices.Reverse(job.path) // the newest first, as the runner prepends them
		}
		values["steps."+step.ID+".outcome"] = outcome
		if step.ID != "" {
			job.outputs[step.ID] = map[string]string{}
			for _, line := range readLines(t, outputFile) {
				name, value, ok := strings.Cut(line, "=")
				if !ok {
					t.Fatalf("step %q wrote %q to GITHUB_OUTPUT; the test reads name=value lines", step.Name, line)
				}
				job.outputs[step.ID][name] = value
				values["steps."+step.ID+".outputs."+name] = value
			}
		}
		if outcome == "failure" && !step.ContinueOnError {
			job.passed = false
		}
	}
	job.log = log.String()
	job.env = strings.Join(readLines(t, envFile), "\n")
	job.summary = strings.Join(readLines(t, summary), "\n")
	return job
}

func readLines(t *testing.T, file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	text := strings.TrimSuffix(string(data), "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// runnerArch is RUNNER_ARCH of a runner on this machine.
func runnerArch() string {
	if runtime.GOARCH == "arm64" {
		return "ARM64"
	}
	return "X64"
}

var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// expandExpressions replaces each ${{ NAME }} of text with its value in
// context; a name the test does not know fails it.
func expandExpressions(t *testing.T, text string, context map[string]string) string {
	return expression.ReplaceAllStringFunc(text, func(m string) string {
		return expressionValue(t, expression.FindStringSubmatch(m)[1], context)
	})
}

// expressionValue is the value of an operand of an expression: a quoted
// literal or a context name (a step's outputs and outcome are empty until
// it ran, as on a runner).
func expressionValue(t *testing.T, operand string, context map[string]string) string {
	operand = strings.TrimSpace(operand)
	if literal, ok := strings.CutPrefix(operand, "'"); ok && strings.HasSuffix(literal, "'") {
		return strings.TrimSuffix(literal, "'")
	}
	if value, ok := context[operand]; ok || strings.HasPrefix(operand, "steps.") {
		return value
	}
	t.Fatalf("the action reads %s, which the test's runner does not set", operand)
	return ""
}

// evalCondition evaluates a step's if: success(), or comparisons (== and
// != of operands) joined by &&, the only forms the action uses; any other
// fails the test.
func evalCondition(t *testing.T, cond string, context map[string]string) bool {
	for _, term := range strings.Split(cond, "&&") {
		term = strings.TrimSpace(term)
		if term == "success()" {
			continue
		}
		var left, right string
		var equal bool
		switch {
		case strings.Contains(term, "!="):
			left, right, _ = strings.Cut(term, "!=")
		case strings.Contains(term, "=="):
			left, right, _ = strings.Cut(term, "==")
			equal = true
		default:
			t.Fatalf("the test's runner cannot evaluate the condition %q", cond)
		}
		if (expressionValue(t, left, context) == expressionValue(t, right, context)) != equal {
			return false
		}
	}
	return true
}

// readmeWorkflowInputs returns the inputs the workflow of
// docs/integrations.md (its text integrations) gives the
// action, after checking that it uses this repository's action.
func readmeWorkflowInputs(t *testing.T, integrations string) map[string]string {
	t.Helper()
	block := readmeYAMLBlock(t, integrations, "# .github/workflows/idemlint.yml")
	var workflow struct {
		Jobs map[string]struct {
			Steps []compositeStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(block), &workflow); err != nil {
		t.Fatalf("docs/integrations.md's workflow: %v", err)
	}
	for _, job := range workflow.Jobs {
		for _, step := range job.Steps {
			if strings.HasPrefix(step.Uses, "idemlint/idemlint/.github/actions/idemlint@") {
				return step.With
			}
		}
	}
	t.Fatal("docs/integrations.md's workflow has no step that uses idemlint/idemlint/.github/actions/idemlint")
	return nil
}

// readmePreCommitConfig returns the .pre-commit-config.yaml of
// docs/integrations.md (its text integrations) with
// this repository's URL replaced by clone and its rev by commit.
func readmePreCommitConfig(t *testing.T, integrations, clone, commit string) string {
	t.Helper()
	block := readmeYAMLBlock(t, integrations, "# .pre-commit-config.yaml")
	var config struct {
		Repos []struct {
			Repo  string           `yaml:"repo"`
			Rev   string           `yaml:"rev"`
			Hooks []map[string]any `yaml:"hooks"`
		} `yaml:"repos"`
	}
	if err := yaml.Unmarshal([]byte(block), &config); err != nil {
		t.Fatalf("docs/integrations.md's pre-commit configuration: %v", err)
	}
	if len(config.Repos) != 1 || config.Repos[0].Repo != "https://github.com/idemlint/idemlint" {
		t.Fatalf("docs/integrations.md's pre-commit configuration should name only https://github.com/idemlint/idemlint:\n%s", block)
	}
	config.Repos[0].Repo, config.Repos[0].Rev = clone, commit
	out, err := yaml.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// readmeYAMLBlock returns the code block of the documentation text doc
// whose first line is first.
func readmeYAMLBlock(t *testing.T, doc, first string) string {
	t.Helper()
	_, block, ok := strings.Cut(doc, "```yaml\n"+first+"\n")
	if !ok {
		t.Fatalf("docs/integrations.md has no yaml block starting %q", first)
	}
	block, _, _ = strings.Cut(block, "```\n")
	return block
}

// TestCIToolsInstall runs .ci/tools, which installs the programs CI
// needs, on a machine that has none of them, with stand-ins for sudo and
// apt-get that log their calls: as root apt-get runs directly, as another
// user (a GitHub runner) through sudo, since the stand-in apt-get, like
// the real one, refuses a user who is not root.
func TestCIToolsInstall(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	want := "gcc neovim pre-commit redis-server curl"
	if initdb, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(initdb) == 0 {
		want += " postgresql"
	}
	for _, proxy := range []string{"nginx", "haproxy"} {
		if _, err := os.Stat("/usr/sbin/" + proxy); err != nil {
			want += " " + proxy
		}
	}
	users := map[string]*syscall.Credential{"as another user": nil}
	if os.Geteuid() == 0 {
		users["as root"] = nil
		user, err := testserver.ServerUser()
		if err != nil {
			t.Skip(err)
		}
		users["as another user"] = user
	}
	for name, user := range users {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			script, err := os.ReadFile(filepath.Join("..", "..", ".ci", "tools"))
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{
				"tools":    string(script),
				"bin/sudo": "#!/bin/sh\necho \"sudo $*\" >> \"$LOG\"\nexec env SUDO_UID=0 \"$@\"\n",
				"bin/apt-get": "#!/bin/sh\nif [ \"$(id -u)\" -ne 0 ] && [ -z \"$SUDO_UID\" ]; then\n" +
					"  echo 'E: Could not open lock file - open (13: Permission denied)' >&2; exit 100\nfi\n" +
					"echo \"apt-get $* DEBIAN_FRONTEND=$DEBIAN_FRONTEND\" >> \"$LOG\"\n",
			}
			for file, text := range files {
				path := filepath.Join(dir, filepath.FromSlash(file))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// The only other programs on the PATH: those the script and
			// the stand-ins run.
			for _, program := range []string{"id", "env"} {
				path, err := exec.LookPath(program)
				if err != nil {
					t.Skipf("%s is not installed", program)
				}
				if err := os.Symlink(path, filepath.Join(dir, "bin", program)); err != nil {
					t.Fatal(err)
				}
			}
			log := filepath.Join(dir, "log")
			cmd := exec.Command(bash, filepath.Join(dir, "tools"))
			cmd.Env = []string{"PATH=" + filepath.Join(dir, "bin"), "LOG=" + log}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: user}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf(".ci/tools: %v\n%s", err, out)
			}
			got, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			calls := "apt-get update -qq DEBIAN_FRONTEND=\n" +
				"apt-get install -y -qq " + want + " DEBIAN_FRONTEND=noninteractive\n"
			if os.Geteuid() != 0 || user != nil {
				calls = "sudo apt-get update -qq\napt-get update -qq DEBIAN_FRONTEND=\n" +
					"sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq " + want + "\n" +
					"apt-get install -y -qq " + want + " DEBIAN_FRONTEND=noninteractive\n"
			}
			if string(got) != calls {
				t.Errorf(".ci/tools called:\n%s\nwant:\n%s", got, calls)
			}
		})
	}
}
