package pathmatch

import (
	"regexp"
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
		carries  bool // Match
		overlaps bool // Overlaps
	}{
		{Exact, "/orders", "/orders", true, true},
		{Exact, "/orders/42", "/orders/{id}", false, true}, // one request of the template
		{Exact, "/orders/{x}", "/orders/{id}", true, true},
		{Exact, "/orders/", "/orders/{id}", false, false}, // a parameter is never empty
		{Exact, "/orders", "/orders/{id}", false, false},
		{Exact, "/orders/42/items", "/orders/{id}", false, false},
		{Exact, "/orders/42", "/orders/{id}/items", false, false},
		{Exact, "/orders/", "/orders", false, false},

		{Prefix, "/", "/orders/{id}", true, true},
		{Prefix, "/ord", "/orders/{id}", true, true}, // Istio: a string prefix
		{Prefix, "/orders/", "/orders/{id}", true, true},
		{Prefix, "/orders/4", "/orders/{id}", false, true},
		{Prefix, "/orders/42/", "/orders/{id}", false, false}, // "/" is not in a segment
		{Prefix, "/orders/42/i", "/orders/{id}/items", false, true},
		{Prefix, "/orders/42/x", "/orders/{id}/items", false, false},
		{Prefix, "/payments", "/orders/{id}", false, false},
		{Prefix, "/orders/42/items/7", "/orders/{id}/items", false, false},
		{Prefix, "/api/orders", "/api/ordersx", true, true},

		{SegmentPrefix, "/", "/orders/{id}", true, true},
		{SegmentPrefix, "/orders", "/orders/{id}", true, true},
		{SegmentPrefix, "/orders/", "/orders/{id}", true, true},
		{SegmentPrefix, "/ord", "/orders/{id}", false, false}, // whole segments only
		{SegmentPrefix, "/api/orders", "/api/ordersx", false, false},
		{SegmentPrefix, "/orders/42", "/orders/{id}/items", false, true},
		{SegmentPrefix, "/orders/42/items/x", "/orders/{id}/items", false, false},
		{SegmentPrefix, "/orders", "/orders", true, true},

		{Regex, "/orders/[0-9]+", "/orders/{id}", true, true},
		{Regex, "/orders/[a-f0-9-]{36}", "/orders/{id}", true, true},
		{Regex, "/orders/[a-z]+", "/orders/{id}", true, true},
		{Regex, "/orders", "/orders/{id}", false, false}, // the whole path must match
		{Regex, "/orders/.*", "/orders", false, false},
		{Regex, "/(orders|carts)/[^/]+/items", "/carts/{cart}/items", true, true},

		{Template, "/orders/{orderId}", "/orders/{id}", true, true},
		{Template, "/orders/{id}", "/orders/{id}/items", false, false},
		{Template, "/{proxy+}", "/orders/{id}/items", true, true},
		{Template, "/orders/{proxy+}", "/orders", false, false}, // greedy takes at least one segment
		{Template, "/orders/latest", "/orders/{id}", false, true},
		{Template, "/orders/{id}", "/orders/latest", true, true},
	}
	for _, tt := range tests {
		m, err := New(tt.kind, tt.value)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Match(tt.template); got != tt.carries {
			t.Errorf("%v %q carries %q = %v, want %v", tt.kind, tt.value, tt.template, got, tt.carries)
		}
		if got := m.Overlaps(tt.template); got != tt.overlaps {
			t.Errorf("%v %q overlaps %q = %v, want %v", tt.kind, tt.value, tt.template, got, tt.overlaps)
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
	check("kong", order(Kong, []Candidate{
		{Path: mk(Prefix, "/")},
		{Path: mk(Prefix, "/orders/items")},
		{Path: mk(Regex, "/b.*")},
		{Path: mk(Regex, "/orders/[^/]+.*")},
		{Path: mk(Prefix, "/orders"), Method: "POST"},
	}), "prefix /orders POST", "regex /b.*", "regex /orders/[^/]+.*", "prefix /orders/items", "prefix /")
	check("listed", order(Listed, []Candidate{
		{Path: mk(SegmentPrefix, "/")},
		{Path: mk(Exact, "/a")},
	}), "segment prefix /", "exact /a")
}

// FuzzNewRegex holds New to regexp.Compile: it refuses exactly the
// expressions Compile refuses, though it compiles only at first use, and
// then matches as Compile's expression does.
func FuzzNewRegex(f *testing.F) {
	for _, seed := range []string{`/orders/[^/]+`, `/orders/(?<=x)`, `(a`, `x{1001}`, `((((a))))`, `/api/.*`, `\pZ`} {
		f.Add(seed, "/orders/1")
	}
	f.Fuzz(func(t *testing.T, value, s string) {
		m, err := New(Regex, value)
		re, compileErr := regexp.Compile(`^(?:` + value + `)$`)
		if (err == nil) != (compileErr == nil) {
			t.Fatalf("New(%q) error %v, regexp.Compile error %v", value, err, compileErr)
		}
		if err == nil && m.MatchString(s) != re.MatchString(s) {
			t.Fatalf("%q matching %q: %v, regexp says %v", value, s, m.MatchString(s), re.MatchString(s))
		}
	})
}
