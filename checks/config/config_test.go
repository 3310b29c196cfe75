package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/asbuilt"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	top := filepath.Join(root, FileName)
	nested := filepath.Join(root, "team", FileName)
	write(t, top, `{}`)
	write(t, nested, `{}`)
	write(t, filepath.Join(root, "team", "edges", "01.json"), `{}`)
	write(t, filepath.Join(root, "other", "01.json"), `{}`)

	for start, want := range map[string]string{
		root:                                            top,
		filepath.Join(root, "other"):                    top,
		filepath.Join(root, "other", "01.json"):         top, // a file: start in its directory
		filepath.Join(root, "team"):                     nested,
		filepath.Join(root, "team", "edges"):            nested, // the nearest wins
		filepath.Join(root, "team", "edges", "01.json"): nested,
	} {
		got, err := Find(start)
		if err != nil || got != want {
			t.Errorf("Find(%s) = %q, %v; want %q", start, got, err, want)
		}
	}
}

// Discover finds the configuration as every command does: --config names
// it, --no-config drops it, else the nearest file applies, if any.
func TestDiscover(t *testing.T) {
	root := t.TempDir()
	found := filepath.Join(root, "set", FileName)
	named := filepath.Join(root, "named.json")
	write(t, found, `{}`)
	write(t, named, `{}`)
	nowhere := t.TempDir()
	for _, tc := range []struct {
		name     string
		explicit string
		none     bool
		start    string
		want     string // the configuration's path, "" for none
	}{
		{"nearest", "", false, filepath.Join(root, "set", "01.json"), found},
		{"named", named, false, filepath.Join(root, "set"), named},
		{"none", "", true, filepath.Join(root, "set"), ""},
		{"no file", "", false, nowhere, ""},
	} {
		cfg, err := Discover(tc.explicit, tc.none, tc.start, rules)
		got := ""
		if cfg != nil {
			got = cfg.Path
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: Discover = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := Discover(filepath.Join(root, "missing.json"), false, root, rules); err == nil {
		t.Error("Discover with a --config that does not exist: no error")
	}
}

func TestParse(t *testing.T) {
	c, err := Parse("cfg/.idemlint.json", []byte(`{
  "$schema": "https://github.com/idemlint/idemlint/schemas/v1/config.schema.json",
  "rules": {"IDL112": "off", "IDL110": "warning", "IDL001": "error"},
  "ignore": ["generated/**"],
  "include": ["**/*.json"],
  "sets": ["services/*"],
  "max_retry_amplification": 6,
  "min_ttl": {"billing": "30d"}
}`), rules)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Path:                  "cfg/.idemlint.json",
		Disabled:              map[string]bool{"IDL112": true},
		Severity:              map[string]checks.Severity{"IDL110": checks.Warning, "IDL001": checks.Error},
		MaxRetryAmplification: 6,
		MinTTL:                map[string]time.Duration{"billing": 30 * 24 * time.Hour},
	}
	if diff := cmp.Diff(want, c, cmpopts.IgnoreUnexported(Config{})); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{
			name: "unknown key",
			src:  "{\n  \"rule\": {}\n}",
			want: []string{`c.json:2:11: unknown field "rule"; did you mean "rules"?`},
		},
		{
			name: "typo of sets",
			src:  `{"set": ["services/*"]}`,
			want: []string{`c.json:1:9: unknown field "set"; did you mean "sets"?`},
		},
		{
			name: "not JSON",
			src:  `{"rules": {},}`,
			want: []string{`c.json:1:14: trailing comma before '}'; remove the comma`},
		},
		{
			name: "duplicate key",
			src:  `{"ignore": [], "ignore": []}`,
			want: []string{`c.json:1:16: duplicate key "ignore" (first at line 1, column 2); JSON parsers disagree on which one wins: keep one`},
		},
		{
			name: "schema violations, every one, in the order of the file",
			src:  `{"rules": {"IDL112": "silent"}, "max_retry_amplification": 0, "min_ttl": {"default": "1 day"}}`,
			want: []string{
				`c.json:1:22: "IDL112" must be one of "off", "error", "warning", found "silent"`,
				`c.json:1:60: "max_retry_amplification" must be at least 1, found 0`,
				`c.json:1:86: "default" must be a duration: an integer followed by s, m, h, d or w (e.g. "24h", "14d"), found "1 day"`,
			},
		},
		{
			name: "rule ids",
			src:  `{"rules": {"IDL999": "off", "idl112": "off", "IDL001": "off", "IDLL201": "warning"}}`,
			want: []string{
				`c.json:1:22: unknown rule "IDL999" in "rules"; "idemlint rules" lists the rule ids`,
				`c.json:1:39: unknown rule "idl112" in "rules"; did you mean "IDL112"?`,
				`c.json:1:56: IDL001 cannot be turned off: a file that is not strict JSON cannot be checked at all`,
				`c.json:1:74: unknown rule "IDLL201" in "rules"; did you mean "IDL201"?`,
			},
		},
		{
			name: "IDL001 downgraded",
			src:  `{"rules": {"IDL001": "warning"}}`,
			want: []string{`c.json:1:22: IDL001 is always an error: a file that is not strict JSON cannot be checked at all`},
		},
		{
			name: "ignore patterns",
			src:  `{"ignore": ["/abs/*.json", "a/../b", "x//y", "[z"]}`,
			want: []string{
				`c.json:1:13: ignore pattern "/abs/*.json": patterns are relative to the directory of .idemlint.json; remove the leading "/"`,
				`c.json:1:28: ignore pattern "a/../b": segment ".." never matches: write a path below the directory of .idemlint.json without empty, "." or ".." segments`,
				`c.json:1:38: ignore pattern "x//y": segment "" never matches: write a path below the directory of .idemlint.json without empty, "." or ".." segments`,
				`c.json:1:46: ignore pattern "[z": segment "[z": syntax error in pattern`,
			},
		},
		{
			name: "include and sets patterns",
			src:  `{"include": ["**/*.json", "/x"], "sets": ["a/./b", "ok/*", "[z"]}`,
			want: []string{
				`c.json:1:27: include pattern "/x": patterns are relative to the directory of .idemlint.json; remove the leading "/"`,
				`c.json:1:43: sets pattern "a/./b": segment "." never matches: write a path below the directory of .idemlint.json without empty, "." or ".." segments`,
				`c.json:1:60: sets pattern "[z": segment "[z": syntax error in pattern`,
			},
		},
		{
			name: "huge numbers",
			src:  `{"max_retry_amplification": 1e12, "min_ttl": {"billing": "99999999999999999w"}}`,
			want: []string{
				`c.json:1:29: "max_retry_amplification" must be at most 2147483647, found 1e12`,
				`c.json:1:58: "billing": ttl "99999999999999999w" is not an integer followed by s, m, h, d or w`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("c.json", []byte(tt.src), rules)
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", c)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.json"), rules)
	if err == nil || !strings.HasSuffix(err.Error(), "nope.json: no such file or directory") {
		t.Errorf("Load(missing) = %v; want the path and the reason", err)
	}
}

func TestNoteIgnoredNamesTheNamedPathsLeftOut(t *testing.T) {
	dir := t.TempDir()
	c, err := Parse(filepath.Join(dir, FileName), []byte(`{"ignore": ["generated"]}`), rules)
	if err != nil {
		t.Fatal(err)
	}
	gen, kept := filepath.Join(dir, "generated", "x.json"), filepath.Join(dir, "x.json")
	var said strings.Builder
	c.NoteIgnored(&said, []string{gen, kept})
	want := "idemlint: " + gen + ` is ignored by ` + c.Path + ` ("ignore"), so it is not checked; --no-config checks it` + "\n"
	if said.String() != want {
		t.Errorf("NoteIgnored said %q, want %q", said.String(), want)
	}
	said.Reset()
	(*Config)(nil).NoteIgnored(&said, []string{gen})
	if said.Len() != 0 {
		t.Errorf("no configuration said %q, want nothing", said.String())
	}
}

func TestIgnored(t *testing.T) {
	dir := t.TempDir()
	c, err := Parse(filepath.Join(dir, FileName), []byte(`{"ignore": ["generated", "legacy/*.json", "**/draft-*.json", "a/**/z.json"]}`), rules)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"generated/x.json":            true, // a matching directory covers its files
		"generated/deep/x.json":       true,
		"generatedx/x.json":           false,
		"legacy/old.json":             true,
		"legacy/sub/old.json":         false, // "*" stays within a segment
		"draft-1.json":                true,  // "**" matches zero segments
		"team/edges/draft-2.json":     true,
		"team/edges/final.json":       false,
		"a/z.json":                    true,
		"a/b/c/z.json":                true,
		"b/a/z.json":                  false,
		"../outside/generated/x.json": false, // outside the config's directory
	} {
		if got := c.Ignored(filepath.Join(dir, filepath.FromSlash(name))); got != want {
			t.Errorf("Ignored(%s) = %v, want %v", name, got, want)
		}
	}

	// Relative paths are resolved against the working directory.
	t.Chdir(dir)
	if !c.Ignored(filepath.FromSlash("generated/x.json")) || c.Ignored("ok.json") {
		t.Error("relative paths are not matched against the configuration's directory")
	}
}

func TestPlace(t *testing.T) {
	dir := t.TempDir()
	c, err := Parse(filepath.Join(dir, FileName), []byte(`{
  "include": ["**/*.json", "extra/*.boundary", "whole"],
  "ignore": ["**/draft-*.json", "services/legacy"],
  "sets": ["services/*", "fixtures/rules/*/*", "services/payments/regions/*"]
}`), rules)
	if err != nil {
		t.Fatal(err)
	}
	type placed struct {
		Set  string
		Keep bool
	}
	for name, want := range map[string]placed{
		"edges/01.json":                          {"", true},  // in no set: the default set
		"edges/notes.md":                         {"", false}, // not included
		"extra/a.boundary":                       {"", true},
		"extra/deeper/a.boundary":                {"", false}, // "*" stays within a segment
		"whole/README.md":                        {"", true},  // a matching directory covers its files
		"services/orders/01.json":                {"services/orders", true},
		"services/orders/nested/deep/01.json":    {"services/orders", true}, // files below a set's directory are in it
		"services/orders/draft-1.json":           {"services/orders", false},
		"services/legacy/01.json":                {"services/legacy", false},
		"services/01.json":                       {"", true},                             // "services" itself is not a set
		"services/payments/regions/eu/01.json":   {"services/payments/regions/eu", true}, // the deepest set wins
		"services/payments/01.json":              {"services/payments", true},
		"fixtures/rules/IDL202/case-a/01.json":   {"fixtures/rules/IDL202/case-a", true},
		"fixtures/rules/IDL202/01.json":          {"", true},
		"fixtures/rules/IDL202/case-a/x/02.json": {"fixtures/rules/IDL202/case-a", true},
		"../outside/services/a/01.json":          {"", true}, // outside: as without a configuration
		"../outside/services/a/notes.md":         {"", false},
	} {
		set, keep := c.Place(filepath.Join(dir, filepath.FromSlash(name)))
		if got := (placed{set, keep}); got != want {
			t.Errorf("Place(%s) = %+v, want %+v", name, got, want)
		}
	}

	// Without "include", every *.json file is included; without a
	// configuration too.
	plain, err := Parse(filepath.Join(dir, FileName), []byte(`{}`), rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Config{plain, nil} {
		for name, want := range map[string]bool{"a.json": true, "x/y/b.json": true, "a.boundary": false} {
			if set, keep := c.Place(filepath.Join(dir, filepath.FromSlash(name))); set != "" || keep != want {
				t.Errorf("config %v: Place(%s) = %q, %v; want \"\", %v", c != nil, name, set, keep, want)
			}
		}
	}

	// Set names do not depend on the working directory.
	t.Chdir(filepath.Join(dir))
	if set, _ := c.Place(filepath.FromSlash("services/orders/01.json")); set != "services/orders" {
		t.Errorf("relative path: set %q, want services/orders", set)
	}
}

func TestOptionsPrecedence(t *testing.T) {
	c, err := Parse("c.json", []byte(`{"max_retry_amplification": 6, "min_ttl": {"default": "12h"}, "rules": {"IDL112": "off"}}`), rules)
	if err != nil {
		t.Fatal(err)
	}
	defaults := checks.DefaultOptions()
	three := 3
	tests := []struct {
		name       string
		cfg        *Config
		flags      Flags
		wantAmp    int
		wantTTL    time.Duration
		wantBillng time.Duration
		wantOff    bool
	}{
		{"defaults", nil, Flags{}, defaults.Limits.MaxRetryAmplification, defaults.Limits.MinTTL["default"], defaults.Limits.MinTTL["billing"], false},
		{"file over defaults", c, Flags{}, 6, 12 * time.Hour, defaults.Limits.MinTTL["billing"], true},
		{"flags over file", c, Flags{MaxRetryAmplification: &three}, 3, 12 * time.Hour, defaults.Limits.MinTTL["billing"], true},
		{"flags over defaults", nil, Flags{MaxRetryAmplification: &three}, 3, defaults.Limits.MinTTL["default"], defaults.Limits.MinTTL["billing"], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options(tt.cfg, tt.flags)
			if o.Limits.MaxRetryAmplification != tt.wantAmp || o.Limits.MinTTL["default"] != tt.wantTTL ||
				o.Limits.MinTTL["billing"] != tt.wantBillng || o.Disabled["IDL112"] != tt.wantOff {
				t.Errorf("Options = amplification %d, min ttl %v/%v, IDL112 off %v; want %d, %v/%v, %v",
					o.Limits.MaxRetryAmplification, o.Limits.MinTTL["default"], o.Limits.MinTTL["billing"], o.Disabled["IDL112"],
					tt.wantAmp, tt.wantTTL, tt.wantBillng, tt.wantOff)
			}
		})
	}
}

// The "as_built" section: paths relative to the file's directory, the
// mesh with its place, and the flags over the file, each on its own.
func TestAsBuilt(t *testing.T) {
	path := filepath.Join("proj", FileName)
	c, err := Parse(path, []byte("{\n  \"as_built\": {\"paths\": [\"deploy/rendered\", \"/abs/mesh.yaml\"],\n    \"mesh\": \"istio\"}\n}"), rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		c     *Config
		flags Flags
		want  asbuilt.Source
		given bool
	}{
		{"none", nil, Flags{}, asbuilt.Source{Mesh: asbuilt.NoMesh}, false},
		{"file", c, Flags{}, asbuilt.Source{Paths: []string{filepath.Join("proj", "deploy", "rendered"), "/abs/mesh.yaml"},
			Mesh: asbuilt.IstioMesh, MeshAt: asbuilt.Pos{File: path, Line: 3, Column: 13}}, true},
		{"--mesh over the file", c, Flags{Mesh: "none"}, asbuilt.Source{Paths: []string{filepath.Join("proj", "deploy", "rendered"), "/abs/mesh.yaml"},
			Mesh: asbuilt.NoMesh}, true},
		{"--as-built over the file", c, Flags{AsBuilt: []string{"x.yaml"}, FollowSymlinks: true},
			asbuilt.Source{Paths: []string{"x.yaml"}, Mesh: asbuilt.IstioMesh, MeshAt: asbuilt.Pos{File: path, Line: 3, Column: 13}, FollowSymlinks: true}, true},
		{"--mesh alone", nil, Flags{Mesh: "istio"}, asbuilt.Source{Mesh: asbuilt.IstioMesh}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, given, err := AsBuilt(tc.c, tc.flags)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || given != tc.given {
				t.Errorf("given %v, want %v; source (-want +got):\n%s", given, tc.given, diff)
			}
		})
	}
	if _, _, err := AsBuilt(nil, Flags{Mesh: "linkerd"}); err == nil || !strings.Contains(err.Error(), "none or istio") {
		t.Errorf("--mesh linkerd: %v", err)
	}
}

// The classes of "as_built": each a class name's implementation, a value
// that names none refused at its place with the nearest name.
func TestAsBuiltClasses(t *testing.T) {
	c, err := Parse("c.json", []byte(`{"as_built": {"classes": {"internal-gw": "envoy-gateway", "legacy": "none"}}}`), rules)
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := AsBuilt(c, Flags{AsBuilt: []string{"x.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]asbuilt.ImplementationName{"internal-gw": asbuilt.EnvoyGatewayImplementation, "legacy": asbuilt.NoImplementation}
	if diff := cmp.Diff(want, src.Classes); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
	for src, want := range map[string]string{
		`{"as_built": {"classes": {"internal-gw": "envoy-gatway"}}}`: `c.json:1:42: as_built.classes "internal-gw": the implementation must be one of istio, envoy-gateway, kong, none, got "envoy-gatway"; did you mean "envoy-gateway"?`,
		`{"as_built": {"classes": {"edge": 3}}}`:                     `c.json:1:35: "edge" must be a string, found number`,
	} {
		if _, err := Parse("c.json", []byte(src), rules); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", src, err, want)
		}
	}
}

// rules are the rules whose ids a configuration may name in these tests.
var rules = slices.Concat(checks.Core, asbuilt.Rules)
