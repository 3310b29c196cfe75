package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/checks/chain"
)

func TestSelectOutputs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "out.sarif")
	tests := []struct {
		name      string
		format    string
		formatSet bool
		specs     []string
		want      []string // format@path of each output
		err       string
	}{
		{"the format alone", "text", false, nil, []string{"text@"}, ""},
		{"outputs alone", "text", false, []string{"sarif=" + file}, []string{"sarif@" + file}, ""},
		{"a given format first", "json", true, []string{"sarif=" + file}, []string{"json@", "sarif@" + file}, ""},
		{"an unknown format", "yaml", true, nil, nil, `unknown format "yaml" (want github, json, junit, markdown, sarif, text)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs, err := SelectOutputs(tt.format, tt.formatSet, tt.specs, Options{})
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("SelectOutputs = %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range outs {
				got = append(got, o.Format+"@"+o.Path)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNotRunGroupsRulesByReason(t *testing.T) {
	var w bytes.Buffer
	NotRun(&w, []checks.NotRun{{Rule: "IDL301", Reason: "no OpenAPI description"}, {Rule: "IDL302", Reason: "no OpenAPI description"}, {Rule: "IDL401", Reason: "no as-built hops"}})
	want := "idemlint: IDL301, IDL302 did not run: no OpenAPI description\nidemlint: IDL401 did not run: no as-built hops\n"
	if w.String() != want {
		t.Errorf("NotRun wrote %q, want %q", w.String(), want)
	}
}

func TestOfNamesEveryDocument(t *testing.T) {
	res := &checks.Result{Files: 3, Unreadable: 1, Facts: []*chain.Facts{{Path: "a.json"}, {Path: "b.json"}}}
	r := Of(res, checks.Core, "v1.2.3", checks.Warning)
	if !cmp.Equal(r.Paths, []string{"a.json", "b.json"}) || r.Files != 3 || r.Unreadable != 1 || r.Version != "v1.2.3" || r.FailOn != checks.Warning || len(r.Rules) == 0 {
		t.Errorf("Of = %+v", r)
	}
}

// SourceOf reads a file from disk until standard input's document is
// there, then gives that whatever the path.
func TestSourceOf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.json")
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdin []byte
	source := SourceOf(&stdin)
	if text, ok := source(path); !ok || text != "{}\n" {
		t.Errorf("source(file) = %q, %v", text, ok)
	}
	if _, ok := source(path + ".absent"); ok {
		t.Error("source of a missing file: ok")
	}
	stdin = []byte(`{"boundary": "adapter"}`)
	if text, ok := source("<stdin>"); !ok || text != string(stdin) {
		t.Errorf("source(stdin) = %q, %v", text, ok)
	}
}
