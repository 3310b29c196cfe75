package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The walkthrough's "go": README's go commands run as a reader types
// them, but for the tests they name. Those are this suite or benchmarks
// of minutes, so "go test" is checked, not run: its packages must exist,
// every top-level alternative of its -run, -bench, -fuzz and -list
// patterns must name a test of theirs and no sub-test alternative one
// ("A/x|B/y" never runs B), every other flag must be one their tests define,
// and every IDEMLINT_ variable it is given must be read by one of their
// files. A renamed benchmark, package, flag or variable in README fails
// the walkthrough at no more cost than parsing the test files. "go test
// -c -o FILE" leaves at FILE a stand-in that checks its -test. flags the
// same way; "go run ./cmd/idemlint" is the idemlint under test; any other
// go command (build, install, run) is the real go, named by
// walkthroughRealGo.
const walkthroughRealGo = "WALKTHROUGH_REAL_GO"

// walkthroughGo is the command walkthrough-go, which the walkthrough's
// "go" runs: it returns the exit status.
func walkthroughGo(args []string) int {
	var err error
	switch {
	case len(args) > 0 && args[0] == "test":
		err = goTestChecked(args[1:], "", os.Environ())
	case len(args) > 1 && args[0] == "test-binary":
		err = goTestChecked(args[2:], args[1], os.Environ())
	case len(args) > 1 && args[0] == "run" && isIdemlintPackage(args[1]):
		err = execve("idemlint", args[2:])
	default:
		err = execve(os.Getenv(walkthroughRealGo), args)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "go %s: %v\n", strings.Join(args, " "), err)
		return 1
	}
	return 0
}

// execve replaces this process with program (a path, or a name looked up
// in PATH) run with args.
func execve(program string, args []string) error {
	path, err := exec.LookPath(program)
	if err != nil {
		return err
	}
	return syscall.Exec(path, append([]string{filepath.Base(program)}, args...), os.Environ())
}

// moduleRoot is the directory of the go.mod at or above the working
// directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// isIdemlintPackage reports whether the package argument pkg is this
// module's cmd/idemlint.
func isIdemlintPackage(pkg string) bool {
	root, err := moduleRoot()
	if err != nil {
		return false
	}
	abs, err := filepath.Abs(pkg)
	return err == nil && abs == filepath.Join(root, "cmd", "idemlint")
}

// goTestValueFlags are the flags of go test (its own, the build's and the
// test binary's it knows) that take a value; goTestBoolFlags those that
// take none. Any other flag goes to the test binary, whose package must
// define it.
var (
	goTestValueFlags = []string{"run", "bench", "benchtime", "count", "cpu", "fuzz", "fuzztime", "fuzzminimizetime",
		"list", "parallel", "skip", "timeout", "o", "coverprofile", "covermode", "coverpkg", "cpuprofile", "memprofile",
		"memprofilerate", "blockprofile", "blockprofilerate", "mutexprofile", "mutexprofilefraction", "outputdir",
		"trace", "shuffle", "tags", "p", "ldflags", "gcflags", "asmflags", "exec", "vet", "mod", "pgo", "C", "json"}
	goTestBoolFlags = []string{"v", "c", "race", "short", "cover", "failfast", "benchmem", "a", "n", "x", "work",
		"trimpath", "msan", "asan", "fullpath"}
)

// goTestChecked checks the arguments of "go test" (or, with binaryOf a
// package directory, of the test binary "go test -c" made of it) and the
// IDEMLINT_ variables of environ against the files of the packages they
// name.
func goTestChecked(args []string, binaryOf string, environ []string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	patterns := map[string]string{}
	var packages, ownFlags []string
	var output string
	compile := false
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") {
			if binaryOf != "" {
				return fmt.Errorf("a test binary takes no package, got %q", arg)
			}
			packages = append(packages, arg)
			continue
		}
		name, value, inline := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if binaryOf != "" {
			var ok bool
			if name, ok = strings.CutPrefix(name, "test."); !ok {
				ownFlags = append(ownFlags, name)
				continue
			}
		}
		switch {
		case slices.Contains(goTestValueFlags, name):
			if !inline {
				if i+1 == len(args) {
					return fmt.Errorf("flag -%s needs a value", name)
				}
				i++
				value = args[i]
			}
			switch name {
			case "run", "bench", "fuzz", "list":
				patterns[name] = value
			case "o":
				output = value
			}
		case slices.Contains(goTestBoolFlags, name):
			compile = compile || name == "c"
		default:
			ownFlags = append(ownFlags, name)
		}
	}
	if binaryOf != "" {
		packages = []string{binaryOf}
	}
	if len(packages) == 0 {
		packages = []string{"."}
	}
	var dirs []string
	for _, pkg := range packages {
		found, err := packageDirs(root, pkg)
		if err != nil {
			return err
		}
		dirs = append(dirs, found...)
	}
	tests, err := readTestFiles(dirs)
	if err != nil {
		return err
	}
	for _, flag := range ownFlags {
		if !tests.flags[flag] {
			return fmt.Errorf("flag -%s is neither go test's nor defined by the tests of %s", flag, strings.Join(packages, " "))
		}
	}
	kinds := map[string][]string{"run": {"Test", "Fuzz", "Example"}, "bench": {"Benchmark"}, "fuzz": {"Fuzz"},
		"list": {"Test", "Benchmark", "Fuzz", "Example"}}
	for flag, pattern := range patterns {
		for level, alternatives := range patternLevels(pattern) {
			for _, alternative := range alternatives {
				if alternative == "^$" {
					continue // runs nothing, on purpose
				}
				re, err := regexp.Compile(alternative)
				if err != nil {
					return fmt.Errorf("-%s %q: %v", flag, pattern, err)
				}
				i := slices.IndexFunc(tests.funcs, func(f string) bool {
					return slices.ContainsFunc(kinds[flag], func(k string) bool { return strings.HasPrefix(f, k) }) && re.MatchString(f)
				})
				switch {
				case level == 0 && i < 0:
					return fmt.Errorf("-%s %q: %q names no %s function of %s", flag, pattern, alternative,
						strings.Join(kinds[flag], ", "), strings.Join(packages, " "))
				case level > 0 && i >= 0:
					// "A/x|B/y" is A's sub-test "x|B", then "y": B never runs.
					return fmt.Errorf("-%s %q: %q is a sub-test pattern but names %s: go test splits a pattern at \"/\" first, so %s never runs",
						flag, pattern, alternative, tests.funcs[i], tests.funcs[i])
				}
			}
		}
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "IDEMLINT_") && !tests.literals[name] {
			return fmt.Errorf("%s is read by no file of %s", name, strings.Join(packages, " "))
		}
	}
	if compile {
		if output == "" || len(dirs) != 1 {
			return errors.New("go test -c: the walkthrough expects -o FILE and one package")
		}
		stub := "#!/bin/sh\nexec walkthrough-go test-binary " + strconv.Quote(dirs[0]) + ` "$@"` + "\n"
		return os.WriteFile(output, []byte(stub), 0o755)
	}
	fmt.Printf("walkthrough: go test checked, not run: %s\n", strings.Join(packages, " "))
	return nil
}

// packageDirs are the directories of the package pattern pkg, relative to
// the working directory: one that must hold Go files, or with "/..." every
// one below it that does.
func packageDirs(root, pkg string) ([]string, error) {
	base, all := strings.CutSuffix(filepath.ToSlash(pkg), "/...")
	if base == "..." {
		base, all = ".", true
	}
	dir, err := filepath.Abs(base)
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(root, dir); err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("package %s is outside the module", pkg)
	}
	var dirs []string
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		hasGo := false
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() && e.Type()&os.ModeSymlink == 0 {
				hasGo = hasGo || strings.HasSuffix(name, ".go")
				continue
			}
			// The walkthrough's directory links to the repository's.
			if info, err := os.Stat(filepath.Join(dir, name)); all && err == nil && info.IsDir() &&
				name != "testdata" && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_") {
				if err := walk(filepath.Join(dir, name)); err != nil {
					return err
				}
			}
		}
		if hasGo {
			dirs = append(dirs, dir)
		}
		return nil
	}
	if err := walk(dir); err != nil {
		return nil, fmt.Errorf("package %s: %v", pkg, err)
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("package %s holds no Go files", pkg)
	}
	return dirs, nil
}

// testFiles is what the walkthrough reads from the Go files of packages:
// their top-level test functions, the flags their tests define and the
// string literals of all their files (for the environment variables).
type testFiles struct {
	funcs    []string
	flags    map[string]bool
	literals map[string]bool
}

func readTestFiles(dirs []string) (testFiles, error) {
	tf := testFiles{flags: map[string]bool{}, literals: map[string]bool{}}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return tf, err
		}
		for _, file := range files {
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			if err != nil {
				return tf, err
			}
			test := strings.HasSuffix(file, "_test.go")
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					if test && n.Recv == nil {
						tf.funcs = append(tf.funcs, n.Name.Name)
					}
				case *ast.BasicLit:
					if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil {
						tf.literals[s] = true
					}
				case *ast.CallExpr:
					if name, ok := flagDefined(n); ok && test {
						tf.flags[name] = true
					}
				}
				return true
			})
		}
	}
	return tf, nil
}

// flagDefined returns the name of the flag that call defines, when it is
// flag.Bool("name", ...), flag.StringVar(&v, "name", ...) and the like.
func flagDefined(call *ast.CallExpr) (string, bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "flag" {
		return "", false
	}
	for _, arg := range call.Args {
		if lit, ok := arg.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			name, err := strconv.Unquote(lit.Value)
			return name, err == nil
		}
	}
	return "", false
}

// patternLevels splits a go test pattern as go test does, at each "/"
// outside brackets and parentheses into levels (the top-level name, then
// each sub-test's), and each level into its alternatives, the
// "|"-separated parts outside parentheses and brackets.
func patternLevels(pattern string) [][]string {
	levels := [][]string{nil}
	depth, start := 0, 0
	inClass := false
	cut := func(i int) {
		last := len(levels) - 1
		levels[last] = append(levels[last], pattern[start:i])
		start = i + 1
	}
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			cut(i)
		case c == '/' && depth == 0:
			cut(i)
			levels = append(levels, nil)
		}
	}
	cut(len(pattern))
	return levels
}

// TestWalkthroughGoTest holds the walkthrough's go test to what it is
// for: README's go test commands pass, and each kind of drift fails.
func TestWalkthroughGoTest(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	tests := []struct {
		args     []string
		binaryOf string // "" for go test, else a test binary's package
		environ  []string
		want     string // the error's text, "" for none
	}{
		{args: []string{"./..."}},
		{args: []string{"-run", "^$", "-bench", "Floor10k|Check10k$", "-benchtime", "3x", "-count", "3", "./checks/"},
			environ: []string{"IDEMLINT_BENCH_CORPUS=/corpus", "HOME=/home"}},
		{args: []string{"-run", "^$", "-bench", "Floor10k|Chek10k$", "./checks/"},
			want: `-bench "Floor10k|Chek10k$": "Chek10k$" names no Benchmark function of ./checks/`},
		{args: []string{"-run", "^$", "-bench", "CheckSet10k", "./checks/"},
			environ: []string{"IDEMLINT_BENCH_CORPSE=/corpus"}, want: "IDEMLINT_BENCH_CORPSE is read by no file of ./checks/"},
		{args: []string{"-run", "TestCrashLosesRecordsUnlessSynced", "-count=10", "-v", "./reference/redisstore"}},
		{args: []string{"-run", "TestCrashLosesRecord$", "./reference/redisstore"},
			want: `-run "TestCrashLosesRecord$": "TestCrashLosesRecord$" names no Test, Fuzz, Example function of ./reference/redisstore`},
		{args: []string{"-run", "^$", "-fuzz", "FuzzParse", "-fuzztime", "60s", "./schemas/jsontree"}},
		{args: []string{"./schemas/jsontre"}, want: "package ./schemas/jsontre: open"},
		{args: []string{"./fixtures", "-update"}},
		{args: []string{"./fixtures", "-updat"}, want: "flag -updat is neither go test's nor defined by the tests of ./fixtures"},
		{args: []string{"-test.run", "^$", "-test.bench", "Floor10k|Check10k$", "-test.benchtime", "3x"}, binaryOf: "checks"},
		{args: []string{"-test.bench", "Flor10k"}, binaryOf: "checks", want: `-bench "Flor10k": "Flor10k" names no Benchmark function of checks`},
		{args: []string{"-run", "^$", "-bench", "Serve|BareDemo/memory|unique/unique", "./cmd/idemlint"}},
		{args: []string{"-run", "^$", "-bench", "Serve/memory/unique|BareDemo/unique", "./cmd/idemlint"},
			want: `-bench "Serve/memory/unique|BareDemo/unique": "BareDemo" is a sub-test pattern but names BenchmarkBareDemo`},
	}
	for _, tt := range tests {
		err := goTestChecked(tt.args, tt.binaryOf, tt.environ)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("go test %q: %v, want no error", tt.args, err)
		case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("go test %q: %v, want an error starting %q", tt.args, err, tt.want)
		}
	}
}
