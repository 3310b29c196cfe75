package pathmatch

import (
	"testing"
)

func TestShape(t *testing.T) {
	for in, want := range map[string]string{
		"/orders/{id}/items/{n}": "/orders/{}/items/{}",
		"/orders/":               "/orders/",
		"/orders/{id":            "/orders/{id",
		"":                       "",
	} {
		if got := Shape(in); got != want {
			t.Errorf("Shape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		kind     Kind
		value    string
		template string
		want     bool
	}{
		{Exact, "/orders", "/orders", true},
		{Exact, "/orders/42", "/orders/{id}", true},
		{Exact, "/orders/{x}", "/orders/{id}", true},
		{Exact, "/orders/", "/orders/{id}", false}, // a parameter is never empty
		{Exact, "/orders", "/orders/{id}", false},
		{Exact, "/orders/42/items", "/orders/{id}", false},
		{Exact, "/orders/42", "/orders/{id}/items", false},
		{Exact, "/orders/", "/orders", false},

		{Prefix, "/", "/orders/{id}", true},
		{Prefix, "/ord", "/orders/{id}", true}, // Istio: a string prefix
		{Prefix, "/orders/4", "/orders/{id}", true},
		{Prefix, "/orders/42/", "/orders/{id}", false}, // "/" is not in a segment
		{Prefix, "/orders/42/i", "/orders/{id}/items", true},
		{Prefix, "/orders/42/x", "/orders/{id}/items", false},
		{Prefix, "/orders/", "/orders/{id}", true},
		{Prefix, "/payments", "/orders/{id}", false},
		{Prefix, "/orders/42/items/7", "/orders/{id}/items", false},

		{SegmentPrefix, "/", "/orders/{id}", true},
		{SegmentPrefix, "/orders", "/orders/{id}", true},
		{SegmentPrefix, "/orders/", "/orders/{id}", true},
		{SegmentPrefix, "/ord", "/orders/{id}", false}, // whole segments only
		{SegmentPrefix, "/orders/42", "/orders/{id}/items", true},
		{SegmentPrefix, "/orders/42/items/x", "/orders/{id}/items", false},
		{SegmentPrefix, "/orders", "/orders", true},

		{Regex, "/orders/[0-9]+", "/orders/{id}", true},
		{Regex, "/orders/[a-f0-9-]{36}", "/orders/{id}", true},
		{Regex, "/orders/[a-z]+", "/orders/{id}", true},
		{Regex, "/orders", "/orders/{id}", false}, // the whole path must match
		{Regex, "/orders/.*", "/orders", false},
		{Regex, "/(orders|carts)/[^/]+/items", "/carts/{cart}/items", true},

		{Template, "/orders/{orderId}", "/orders/{id}", true},
		{Template, "/orders/{id}", "/orders/{id}/items", false},
		{Template, "/{proxy+}", "/orders/{id}/items", true},
		{Template, "/orders/{proxy+}", "/orders", false}, // greedy takes at least one segment
		{Template, "/orders/latest", "/orders/{id}", false},
		{Template, "/orders/{id}", "/orders/latest", true},
	}
	for _, tt := range tests {
		m, err := New(tt.kind, tt.value)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Match(tt.template); got != tt.want {
			t.Errorf("%v %q matches %q = %v, want %v", tt.kind, tt.value, tt.template, got, tt.want)
		}
	}
}

func TestNewRefusesBadRegex(t *testing.T) {
	if _, err := New(Regex, "/orders/(?<=x)"); err == nil {
		t.Fatal("a look-behind (not RE2) compiled")
	}
}

func TestMatchString(t *testing.T) {
	exact, _ := New(Exact, "POST")
	prefix, _ := New(Prefix, "P")
	re, _ := New(Regex, "P(OST|UT)")
	for _, tt := range []struct {
		m    Matcher
		s    string
		want bool
	}{
		{exact, "POST", true}, {exact, "PUT", false},
		{prefix, "PATCH", true}, {prefix, "GET", false},
		{re, "PUT", true}, {re, "PATCH", false}, {re, "XPOST", false},
	} {
		if got := tt.m.MatchString(tt.s); got != tt.want {
			t.Errorf("%v %q on %q = %v, want %v", tt.m.Kind, tt.m.Value, tt.s, got, tt.want)
		}
	}
}

func TestSort(t *testing.T) {
	mk := func(kind Kind, value string) *Matcher { m, _ := New(kind, value); return &m }
	order := func(p Precedence, cs []Candidate) []string {
		Sort(p, cs)
		var out []string
		for _, c := range cs {
			s := "*"
			if c.Path != nil {
				s = c.Path.Kind.String() + " " + c.Path.Value
			}
			if c.Method != "" {
				s += " " + c.Method
			}
			out = append(out, s)
		}
		return out
	}
	check := func(name string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %q, want %q", name, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: %q, want %q", name, got, want)
			}
		}
	}
	check("gateway", order(GatewayAPI, []Candidate{
		{Path: mk(SegmentPrefix, "/")},
		{Path: mk(SegmentPrefix, "/orders")},
		{Path: mk(Regex, "/orders/.*")},
		{Path: mk(SegmentPrefix, "/orders"), Method: "POST"},
		{Path: mk(Exact, "/orders/new")},
	}), "exact /orders/new", "segment prefix /orders POST", "segment prefix /orders", "segment prefix /", "regex /orders/.*")
	check("ingress", order(Ingress, []Candidate{
		{Path: mk(SegmentPrefix, "/")},
		{Path: mk(SegmentPrefix, "/orders/items")},
		{Path: mk(Exact, "/a")},
		{Path: mk(SegmentPrefix, "/orders")},
	}), "exact /a", "segment prefix /orders/items", "segment prefix /orders", "segment prefix /")
	check("apigateway", order(APIGateway, []Candidate{
		{Path: mk(Template, "/{proxy+}"), Method: "ANY"},
		{Path: mk(Template, "/orders/{id}"), Method: "ANY"},
		{Path: mk(Template, "/orders/{id}"), Method: "POST"},
		{Path: mk(Template, "/orders/{id}/items")},
	}), "template /orders/{id}/items", "template /orders/{id} POST", "template /orders/{id} ANY", "template /{proxy+} ANY")
	check("listed", order(Listed, []Candidate{
		{Path: mk(SegmentPrefix, "/")},
		{Path: mk(Exact, "/a")},
	}), "segment prefix /", "exact /a")
}
