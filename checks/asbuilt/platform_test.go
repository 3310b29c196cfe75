package asbuilt

import (
	"slices"
	"strings"
	"testing"
)

// TestRegistryReads holds reading and triage to the list of platforms
// alone: a resource of every listed kind and group is triaged to the parse
// and read as its platform's, one of another group is skipped, and the
// ConfigMaps and exports a platform reads are triaged to the parse.
func TestRegistryReads(t *testing.T) {
	if len(platforms) == 0 {
		t.Fatal("no platform listed")
	}
	for _, p := range platforms {
		for _, k := range p.kinds {
			for _, group := range k.groups {
				doc := "apiVersion: " + group + "/v1\nkind: " + k.kind + "\nmetadata:\n  name: r\n"
				if k.word != "" {
					// Read only when it holds its word (an annotation):
					// without, skipped unparsed.
					if v, _ := triage([]byte(doc)); v != skipIt {
						t.Errorf("%s %s without %q: triage says %d, not skip", p.name, k.kind, k.word, v)
					}
					doc += "  annotations: {" + k.word + ": \"1\"}\n"
				}
				if v, _ := triage([]byte(doc)); v != parseIt {
					t.Errorf("%s %s: triage says %d, not parse", p.name, k.kind, v)
				}
				s := Parse("r.yaml", []byte(doc))
				if len(s.Errors) != 0 || len(s.Resources) != 1 || s.Resources[0].Platform != p.name || s.Resources[0].Kind != k.kind {
					t.Errorf("%s %s of %s: read %+v, errors %v", p.name, k.kind, group, s.Resources, s.Errors)
				}
			}
			other := "apiVersion: example.com/v1\nkind: " + k.kind + "\nmetadata:\n  name: r\n"
			if s := Parse("r.yaml", []byte(other)); len(s.Resources) != 0 || s.Skipped != 1 {
				t.Errorf("%s %s of another group: read %+v, skipped %d", p.name, k.kind, s.Resources, s.Skipped)
			}
		}
		if c := p.configMap; c != nil {
			doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + c.word + "\n"
			if v, _ := triage([]byte(doc)); v != parseIt || !mayHold([]byte(doc)) {
				t.Errorf("%s ConfigMap naming %q: triage says %d", p.name, c.word, v)
			}
		}
		if e := p.export; e != nil {
			for _, key := range e.keys {
				doc := key + ": x\npaths: {}\n"
				if v, _ := triage([]byte(doc)); v != parseIt || !mayHold([]byte(doc)) {
					t.Errorf("%s export key %q: triage says %d", p.name, key, v)
				}
			}
		}
	}
}

// TestDefaultsFollowTheList holds Defaults to the order of platforms,
// and every default to the platform declaring it.
func TestDefaultsFollowTheList(t *testing.T) {
	var want []*Default
	for _, p := range platforms {
		want = append(want, p.defaults...)
	}
	if !slices.Equal(Defaults, want) {
		t.Errorf("Defaults are not by platform, in the order platforms lists them")
	}
	for _, d := range Defaults {
		if !strings.HasPrefix(d.ID, string(d.Platform)+".") {
			t.Errorf("default %s of %s is not named for its platform", d.ID, d.Platform)
		}
	}
}

// TestIndexRefuses holds the list of platforms to refusing a platform
// declared incompletely: a default without its documentation source, a
// name listed twice, a platform that reads nothing.
func TestIndexRefuses(t *testing.T) {
	base := *platforms[0]
	noSource := base
	noSource.name = "example"
	noSource.defaults = []*Default{{ID: "example.retries", Setting: "retries", Value: "2"}}
	sameName := base
	for _, tt := range []struct {
		what string
		p    platform
	}{
		{"a default without a source", noSource},
		{"a name taken", sameName},
		{"reading nothing", platform{name: "example"}},
	} {
		if err := checkPlatforms(append(slices.Clone(platforms), &tt.p)); err == nil {
			t.Errorf("the list took a platform with %s", tt.what)
		}
	}
	if err := checkPlatforms(platforms); err != nil {
		t.Errorf("the platforms: %v", err)
	}
}
