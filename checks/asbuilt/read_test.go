package asbuilt

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the want section of testdata/*.txtar")

// TestRead reads the manifests of each testdata archive (every file but
// "want" and "select", in archive order) and compares the model, dumped
// as text with every position, to its "want" section. "select" lists
// requests, "METHOD /template", each resource's Select answers.
func TestRead(t *testing.T) {
	// The nodes readSimple reuses are poisoned when released: a reader
	// that kept one would change the model.
	defer poisonReleasedNodes()()
	archives, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(archives) == 0 {
		t.Fatal("no testdata archives", err)
	}
	for _, name := range archives {
		t.Run(strings.TrimSuffix(filepath.Base(name), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(name)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var paths []string
			var selects []string
			wantAt := -1
			for i, f := range a.Files {
				switch f.Name {
				case "want":
					wantAt = i
				case "select":
					selects = strings.Split(strings.TrimSpace(string(f.Data)), "\n")
				default:
					p := filepath.Join(dir, f.Name)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, f.Data, 0o644); err != nil {
						t.Fatal(err)
					}
					paths = append(paths, p)
				}
			}
			got := dump(Read(paths), dir, selects)
			if *update {
				if wantAt < 0 {
					a.Files = append(a.Files, txtar.File{Name: "want"})
					wantAt = len(a.Files) - 1
				}
				a.Files[wantAt].Data = []byte(got)
				if err := os.WriteFile(name, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if wantAt < 0 {
				t.Fatal("no want section; run with -update and review it")
			}
			if diff := cmp.Diff(string(a.Files[wantAt].Data), got); diff != "" {
				t.Errorf("model differs (-want +got):\n%s", diff)
			}
		})
	}
}

// dump writes the set as text, positions relative to dir.
func dump(s *Set, dir string, selects []string) string {
	var b strings.Builder
	rel := func(p Pos) string {
		if p.File == "" && p.Line == 0 {
			return "-"
		}
		f, _ := filepath.Rel(dir, p.File)
		return fmt.Sprintf("%s:%d:%d", f, p.Line, p.Column)
	}
	origin := func(o Origin) string {
		if o.Default != nil {
			return "default " + o.Default.ID + " at " + rel(o.At)
		}
		return rel(o.At)
	}
	texts := func(ts []Text) string {
		var parts []string
		for _, t := range ts {
			parts = append(parts, t.Value+"@"+rel(t.At))
		}
		return strings.Join(parts, " ")
	}
	retry := func(label string, r Retry) {
		attempts := fmt.Sprint(r.Attempts)
		if !r.AttemptsKnown {
			attempts = "unknown"
		}
		fmt.Fprintf(&b, "    %s: attempts %s (%s) resends-after-receipt=%v\n", label, attempts, origin(r.AttemptsFrom), r.ResendsAfterReceipt())
		for _, c := range r.Conditions {
			fmt.Fprintf(&b, "      on %s [%s] (%s)\n", c, c.Platform, origin(c.From))
		}
		if r.PerTryTimeout != 0 {
			fmt.Fprintf(&b, "      per-try %s (%s)\n", r.PerTryTimeout, origin(r.PerTryTimeoutFrom))
		}
		for _, g := range r.OnlyIf {
			switch {
			case g.Method != nil:
				fmt.Fprintf(&b, "      only for method %s %q (%s)\n", g.Method.Kind, g.Method.Value, rel(g.At))
			case g.Header != "":
				fmt.Fprintf(&b, "      only with header %s (%s)\n", g.Header, rel(g.At))
			default:
				fmt.Fprintf(&b, "      only if a condition any request may meet (%s)\n", rel(g.At))
			}
		}
	}
	fmt.Fprintf(&b, "skipped %d %v\n", s.Skipped, s.SkippedKinds)
	for _, e := range s.Errors {
		fmt.Fprintf(&b, "error %s: %v\n", rel(e.At), e.Err)
	}
	for _, p := range s.Problems {
		fmt.Fprintf(&b, "problem %s: %s\n", rel(p.At), strings.ReplaceAll(p.Message, dir+string(filepath.Separator), ""))
	}
	for _, c := range s.Configs {
		fmt.Fprintf(&b, "config %s at %s\n", c.Value, rel(c.At))
	}
	for _, res := range s.Resources {
		fmt.Fprintf(&b, "%s %s %s/%s at %s (name at %s)\n", res.Platform, res.Kind, res.Namespace, res.Name.Value, rel(res.At), rel(res.Name.At))
		if res.Traffic != AnyTraffic {
			fmt.Fprintf(&b, "  traffic %s\n", res.Traffic)
		}
		for _, p := range res.Parents {
			fmt.Fprintf(&b, "  parent %s %s/%s@%s\n", p.Kind, p.Namespace, p.Name.Value, rel(p.Name.At))
		}
		if res.Class.Value != "" {
			fmt.Fprintf(&b, "  class %s@%s\n", res.Class.Value, rel(res.Class.At))
		}
		if im := res.Implementation; im != nil {
			fmt.Fprintf(&b, "  implementation %s: %s\n", im.Name, im.By)
		}
		if len(res.Hosts) > 0 {
			fmt.Fprintf(&b, "  hosts %s\n", texts(res.Hosts))
		}
		for _, rt := range res.Routes {
			fmt.Fprintf(&b, "  route at %s backends [%s]\n", rel(rt.At), texts(rt.Backends))
			for _, m := range rt.Matches {
				fmt.Fprintf(&b, "    match at %s:", rel(m.At))
				if m.Path != nil {
					fmt.Fprintf(&b, " path %s %q", m.Path.Kind, m.Path.Value)
				}
				if m.Method != nil {
					fmt.Fprintf(&b, " method %s %q", m.Method.Kind, m.Method.Value)
				}
				if m.Partial != "" {
					fmt.Fprintf(&b, " and %s", m.Partial)
				}
				if m.Traffic != 0 {
					fmt.Fprintf(&b, " on %s traffic", m.Traffic)
				}
				b.WriteString("\n")
			}
			retry("retry", rt.Retry)
			if rt.NonIdempotent != nil {
				retry("retry POST/LOCK/PATCH", *rt.NonIdempotent)
			}
			for _, m := range slices.Sorted(maps.Keys(rt.ByMethod)) {
				retry("retry "+m, rt.ByMethod[m])
			}
			if rt.Timeout != 0 {
				fmt.Fprintf(&b, "    timeout %s (%s)\n", rt.Timeout, origin(rt.TimeoutFrom))
			}
			for _, h := range rt.Removed {
				fmt.Fprintf(&b, "    removes %s at %s (%s)\n", h.Name, rel(h.At), h.Field)
			}
			for _, h := range rt.Set {
				fmt.Fprintf(&b, "    sets %s at %s (%s)\n", h.Name, rel(h.At), h.Field)
			}
			if rt.Forwards != nil {
				var names []string
				for _, h := range rt.Forwards.Headers {
					names = append(names, h.Name+"@"+rel(h.At))
				}
				fmt.Fprintf(&b, "    forwards only [%s] (%s)\n", strings.Join(names, " "), origin(rt.Forwards.From))
			}
			if rt.DropsUnderscores != nil {
				fmt.Fprintf(&b, "    drops headers with _ (%s)\n", origin(*rt.DropsUnderscores))
			}
			if c := rt.CORS; c != nil {
				echo := ""
				if c.Echo {
					echo = " echoes the requested headers"
				}
				fmt.Fprintf(&b, "    cors at %s allow-headers [%s]%s (%s) credentials %v (%s)\n", rel(c.At), texts(c.AllowHeaders), echo, origin(c.AllowHeadersFrom), c.Credentials, origin(c.CredentialsFrom))
			}
		}
		for _, q := range selects {
			if len(res.Routes) == 0 {
				break
			}
			method, template, _ := strings.Cut(q, " ")
			if rt, m, ok := res.Select(method, template, AnyTraffic); !ok {
				fmt.Fprintf(&b, "  select %s: none\n", q)
			} else if m == nil {
				fmt.Fprintf(&b, "  select %s: route at %s (no match condition)\n", q, rel(rt.At))
			} else {
				fmt.Fprintf(&b, "  select %s: route at %s by match at %s\n", q, rel(rt.At), rel(m.At))
			}
		}
	}
	return b.String()
}
