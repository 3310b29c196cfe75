package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/reference/storetest/testserver"
)

// TestMain lets test scripts run idemlint as a real subprocess (so the
// environment and working directory are the script's) without a separate
// build step. "status N idemlint ARGS..." runs idemlint and succeeds only
// if it exits with exactly N, since testscript's "! exec" accepts any
// non-zero status and our exit codes carry meaning.
func TestMain(m *testing.M) {
	testscript.Main(serversStopped{m}, map[string]func(){
		"idemlint": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
		// README's go commands, for TestREADMEWalkthrough.
		"walkthrough-go": func() { os.Exit(walkthroughGo(os.Args[1:])) },
		"status": func() {
			want, err := strconv.Atoi(os.Args[1])
			if err != nil || len(os.Args) < 3 || os.Args[2] != "idemlint" {
				fmt.Fprintln(os.Stderr, "usage: status N idemlint ARGS...")
				os.Exit(99)
			}
			if got := run(os.Args[3:], os.Stdout, os.Stderr); got != want {
				fmt.Fprintf(os.Stderr, "exit status %d, want %d\n", got, want)
				os.Exit(99)
			}
		},
	})
}

// toolInstalled is the condition [tool:NAME] of the scripts: whether the
// program NAME, which an end-to-end script drives, is installed. Under
// CI=true a missing one is an error, so CI cannot skip what it installs.
func toolInstalled(cond string) (bool, error) {
	name, ok := strings.CutPrefix(cond, "tool:")
	if !ok {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			return false, fmt.Errorf("CI=true but %s is not installed (.ci/run installs it)", name)
		}
		return false, nil
	}
	return true, nil
}

// goEnv is "go env NAME", "" when go cannot say.
func goEnv(name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// serversStopped runs the tests, then stops the store servers they
// started (see reference/storetest/testserver).
type serversStopped struct{ m *testing.M }

func (s serversStopped) Run() int {
	defer testserver.StopAll()
	return s.m.Run()
}

func TestScripts(t *testing.T) {
	// Scripts see every fixture set as a directory, overlays applied.
	sets := t.TempDir()
	cases, err := fixtures.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if err := c.Materialize(filepath.Join(sets, filepath.FromSlash(c.Dir))); err != nil {
			t.Fatal(err)
		}
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	goCaches := map[string]string{"GOMODCACHE": goEnv("GOMODCACHE"), "GOCACHE": goEnv("GOCACHE")}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		// IDEMLINT_UPDATE_SCRIPTS=1 rewrites the files "cmp" compares
		// against; review the diff like code.
		UpdateScripts: os.Getenv("IDEMLINT_UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", sets)
			env.Setenv("REPO", repo)
			// Scripts that build Go (the pre-commit golang hook) share
			// this process's caches instead of downloading modules again.
			for name, value := range goCaches {
				env.Setenv("HOST_"+name, value)
			}
			return nil
		},
		Condition: toolInstalled,
		Cmds:      map[string]func(*testscript.TestScript, bool, []string){"action-step": actionStep},
	})
}

// actionStep is the script command "action-step NAME FILE": it writes the
// shell script of the step NAME of the composite action to FILE, so a
// script can run it as the runner would. The action file is plain enough
// to read by indentation: "    - name: NAME", then "      run: |" and the
// lines indented below it.
func actionStep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: action-step NAME FILE")
	}
	action := ts.ReadFile(filepath.Join(ts.Getenv("REPO"), ".github", "actions", "idemlint", "action.yml"))
	_, step, ok := strings.Cut(action, "\n    - name: "+args[0]+"\n")
	if !ok {
		ts.Fatalf("the action has no step %q", args[0])
	}
	step, _, _ = strings.Cut(step, "\n    - name: ")
	_, script, ok := strings.Cut(step, "      run: |\n")
	if !ok {
		ts.Fatalf("step %q has no run block", args[0])
	}
	var lines []string
	for _, line := range strings.Split(script, "\n") {
		if line != "" && !strings.HasPrefix(line, "        ") {
			break
		}
		lines = append(lines, strings.TrimPrefix(line, "        "))
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strings.Join(lines, "\n")), 0o644))
}
