package schemas

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func decodeConfig(t *testing.T, src string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(src)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestValidateConfig(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Violation
	}{
		{
			name: "every key",
			src: `{"$schema": "https://github.com/idemlint/idemlint/schemas/v1/config.schema.json",
				"rules": {"IDL112": "off", "IDL110": "warning", "IDL201": "error"},
				"ignore": ["generated/**", "legacy/*.json"],
				"include": ["**/*.json", "more/*.boundary"],
				"sets": ["services/*", "fixtures/rules/*/*"],
				"max_retry_amplification": 6,
				"min_ttl": {"default": "12h", "billing": "30d", "irreversible": "2w"},
				"as_built": {"paths": ["deploy/rendered", "mesh.yaml"], "mesh": "istio"}}`,
		},
		{
			name: "typos in as_built",
			src:  `{"asbuilt": {}, "as_built": {"path": ["deploy"], "mesh": "linkerd"}}`,
			want: []Violation{
				{"/as_built/mesh", `"mesh" must be one of "none", "istio", found "linkerd"`},
				{"/as_built/path", `unknown field "path"; did you mean "paths"?`},
				{"/asbuilt", `unknown field "asbuilt"; did you mean "as_built"?`},
			},
		},
		{name: "empty", src: `{}`},
		{
			name: "unknown top-level key with a typo",
			src:  `{"ignores": []}`,
			want: []Violation{{"/ignores", `unknown field "ignores"; did you mean "ignore"?`}},
		},
		{
			name: "typos of include and sets",
			src:  `{"includes": [], "set": []}`,
			want: []Violation{
				{"/includes", `unknown field "includes"; did you mean "include"?`},
				{"/set", `unknown field "set"; did you mean "sets"?`},
			},
		},
		{
			name: "include and sets are lists of patterns",
			src:  `{"include": [], "sets": "services/*"}`,
			want: []Violation{
				{"/include", `"include" must not be empty`},
				{"/sets", `"sets" must be an array, found string`},
			},
		},
		{
			// A boundary field is not explained as belonging to a boundary kind.
			name: "unknown top-level key",
			src:  `{"boundary": "adapter"}`,
			want: []Violation{{"/boundary", `unknown field "boundary"; allowed: $schema, as_built, ignore, include, max_retry_amplification, min_ttl, rules, sets`}},
		},
		{
			name: "bad rule level",
			src:  `{"rules": {"IDL112": "disabled"}}`,
			want: []Violation{{"/rules/IDL112", `"IDL112" must be one of "off", "error", "warning", found "disabled"`}},
		},
		{
			name: "bad durations and tiers",
			src:  `{"min_ttl": {"default": "1 day", "gold": "7d"}}`,
			want: []Violation{
				{"/min_ttl/default", `"default" must be a duration: an integer followed by s, m, h, d or w (e.g. "24h", "14d"), found "1 day"`},
				{"/min_ttl/gold", `unknown field "gold"; allowed: billing, default, irreversible`},
			},
		},
		{
			name: "amplification below one",
			src:  `{"max_retry_amplification": 0}`,
			want: []Violation{{"/max_retry_amplification", `"max_retry_amplification" must be at least 1, found 0`}},
		},
		{
			name: "wrong types",
			src:  `{"ignore": "generated", "max_retry_amplification": 2.5}`,
			want: []Violation{
				{"/ignore", `"ignore" must be an array, found string`},
				{"/max_retry_amplification", `"max_retry_amplification" must be an integer, found 2.5`},
			},
		},
		{
			name: "empty pattern",
			src:  `{"ignore": [""]}`,
			want: []Violation{{"/ignore/0", `"ignore"[0] must not be empty`}},
		},
		{
			name: "not an object",
			src:  `[]`,
			want: []Violation{{"", `document must be an object, found array`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ValidateConfig(decodeConfig(t, tt.src))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateConfig(%s) (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

// TestConfigSchemaSource checks the schema is served like the others, with
// the $id an editor resolves and a description on every property.
func TestConfigSchemaSource(t *testing.T) {
	src, ok := Source(configName)
	if !ok {
		t.Fatal(`Source("config"): not found`)
	}
	var doc struct {
		ID         string `json:"$id"`
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	if want := schemaURL(configName); doc.ID != want {
		t.Errorf("$id = %q, want %q", doc.ID, want)
	}
	if len(doc.Properties) != 8 {
		t.Errorf("config schema has %d properties, want 8", len(doc.Properties))
	}
	for name, p := range doc.Properties {
		if p.Description == "" {
			t.Errorf("property %q has no description", name)
		}
	}
}
