package asbuilt

import (
	"slices"
	"strings"
	"testing"
)

// TestRegistryReads holds reading and triage to the registry alone: a
// resource of every registered kind and group is triaged to the parse
// and read as its platform's, one of another group is skipped, and the
// ConfigMaps and exports a platform reads are triaged to the parse.
func TestRegistryReads(t *testing.T) {
	if len(platforms) == 0 {
		t.Fatal("no platform registered")
	}
	for _, p := range platforms {
		for _, k := range p.kinds {
			for _, group := range k.groups {
				doc := "apiVersion: " + group + "/v1\nkind: " + k.kind + "\nmetadata:\n  name: r\n"
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

// TestRegistryOrder holds Defaults to the platforms' declared order,
// whatever order they register in (files initialise in name order), and
// every default to the platform declaring it.
func TestRegistryOrder(t *testing.T) {
	saved := slices.Clone(platforms)
	t.Cleanup(func() {
		platforms = nil
		for _, p := range saved {
			register(p)
		}
	})
	ids := func() []string {
		var out []string
		for _, d := range Defaults {
			out = append(out, string(d.Platform)+" "+d.ID)
		}
		return out
	}
	want := ids()
	platforms = nil
	for _, p := range slices.Backward(saved) {
		register(p)
	}
	if got := ids(); !slices.Equal(got, want) {
		t.Errorf("registered in reverse, Defaults are\n%s\nnot\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, id := range want {
		name, rest, _ := strings.Cut(id, " ")
		if !strings.HasPrefix(rest, name+".") {
			t.Errorf("default %s is not named for its platform", id)
		}
	}
}

// TestRegisterRefuses holds register to refusing a platform declared
// incompletely: a default without its documentation source, a name or an
// order already taken.
func TestRegisterRefuses(t *testing.T) {
	saved := slices.Clone(platforms)
	t.Cleanup(func() {
		platforms = nil
		for _, p := range saved {
			register(p)
		}
	})
	base := *saved[0]
	noSource := base
	noSource.name, noSource.order = "example", 100
	noSource.defaults = []*Default{{ID: "example.retries", Setting: "retries", Value: "2"}}
	sameName := base
	sameName.order = 101
	sameOrder := base
	sameOrder.name = "example"
	for _, tt := range []struct {
		what string
		p    platform
	}{
		{"a default without a source", noSource},
		{"a name taken", sameName},
		{"an order taken", sameOrder},
		{"reading nothing", platform{name: "example", order: 102}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("register took a platform with %s", tt.what)
				}
			}()
			register(&tt.p)
		}()
	}
}
