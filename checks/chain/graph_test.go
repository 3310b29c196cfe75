package chain

import (
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// doc parses one document and returns its facts; the graph needs no
// schema-valid input, so the documents below hold only what linking and
// fates read.
func doc(t testing.TB, path, src string) *Facts {
	t.Helper()
	d, _, problems := boundary.Parse(path, []byte(src))
	if d == nil || len(problems) > 0 {
		t.Fatalf("%s: %v", path, problems)
	}
	return FactsOf(d)
}

const keyLists = `"cors_allowed_headers": ["x-idempotency-key"], "header_to_allow_inbound": ["x-idempotency-key"], "header_to_allow_outbound": ["x-idempotency-key"]`

// hop writes an edge document carrying the given operations (all POST).
func hop(kind boundary.Kind, from, to string, ops ...string) string {
	return fmt.Sprintf(`{"boundary": %q, "from": %q, "to": %q, "operations": [%s], %s,
		"http_idempotency": {"role": "validate_only", "require_key": {"methods": ["POST"]}}}`, kind, from, to, operations(ops), keyLists)
}

func adapter(service string, ops ...string) string {
	return fmt.Sprintf(`{"boundary": "adapter", "service": %q, "operations": [%s],
		"http_idempotency": {"role": "owner", "require_key": {"methods": ["POST"]}}}`, service, operations(ops))
}

func operations(keys []string) string {
	var ops []string
	for _, k := range keys {
		ops = append(ops, fmt.Sprintf(`{"operation_key": %q, "method": "POST", "path": "/x"}`, k))
	}
	return strings.Join(ops, ", ")
}

// set parses path/source pairs.
func set(t testing.TB, pairs ...string) []*Facts {
	t.Helper()
	var docs []*Facts
	for i := 0; i < len(pairs); i += 2 {
		docs = append(docs, doc(t, pairs[i], pairs[i+1]))
	}
	return docs
}

// summary renders each chain as "name [paths] stop-reason" for comparison.
func summary(g *Graph) []string {
	var out []string
	for _, c := range g.Chains {
		var paths []string
		for _, h := range c.Hops {
			paths = append(paths, string(h.Kind)+"@"+h.Doc.Path)
		}
		s := c.Name() + " [" + strings.Join(paths, " ") + "]"
		if !c.Complete() {
			s += " stops: " + c.StopReason()
		}
		out = append(out, s)
	}
	return out
}

func TestBuildLinksCompleteChain(t *testing.T) {
	docs := set(t,
		"1.json", hop(boundary.BrowserToBFF, "web", "bff", "orders.create", "orders.cancel"),
		"2.json", hop(boundary.BFFToGateway, "bff", "gw", "orders.create", "orders.cancel"),
		"3.json", hop(boundary.GatewayToAdapter, "gw", "orders", "orders.create", "orders.cancel"),
		"4.json", adapter("orders", "orders.create", "orders.cancel"),
	)
	g := Build(docs)
	want := []string{
		"orders.cancel: web -> bff -> gw -> orders [browser_to_bff@1.json bff_to_gateway@2.json gateway_to_adapter@3.json adapter@4.json]",
		"orders.create: web -> bff -> gw -> orders [browser_to_bff@1.json bff_to_gateway@2.json gateway_to_adapter@3.json adapter@4.json]",
	}
	if diff := cmp.Diff(want, summary(g)); diff != "" {
		t.Errorf("chains (-want +got):\n%s", diff)
	}
	for _, d := range docs {
		if !g.OnChain(d) {
			t.Errorf("%s: not on a chain", d.Path)
		}
	}
	c := g.Chains[1]
	if c.Hops[2].Op.Key.Value != "orders.create" || c.Hops[3].Op != &docs[3].Operations.Items[0] {
		t.Errorf("hops do not point at their document's operation: %+v", c.Hops)
	}
	if !c.StateChanging() || c.KeyHeader() != "x-idempotency-key" || g.Unlinkable != 0 {
		t.Errorf("StateChanging %v, KeyHeader %q, Unlinkable %d", c.StateChanging(), c.KeyHeader(), g.Unlinkable)
	}
}

func TestBuildRecordsWherePathsStop(t *testing.T) {
	docs := set(t,
		// The BFF sends orders.create to two gateways: gw-a carries it to an
		// adapter, gw-b has no edge onward, gw-c does not list it.
		"1.json", hop(boundary.BrowserToBFF, "web", "bff", "orders.create", "orders.ship"),
		"2a.json", hop(boundary.BFFToGateway, "bff", "gw-a", "orders.create"),
		"2b.json", hop(boundary.BFFToGateway, "bff", "gw-b", "orders.create"),
		"2c.json", hop(boundary.BFFToGateway, "bff", "gw-c", "orders.refund"),
		"3.json", hop(boundary.GatewayToAdapter, "gw-a", "orders", "orders.create"),
		"4.json", adapter("other", "orders.create"),
	)
	g := Build(docs)
	want := []string{
		`orders.create: web -> bff -> gw-a -> orders [browser_to_bff@1.json bff_to_gateway@2a.json gateway_to_adapter@3.json] stops: no adapter policy has service "orders"`,
		`orders.create: web -> bff -> gw-b [browser_to_bff@1.json bff_to_gateway@2b.json] stops: no gateway_to_adapter document has from "gw-b"`,
		`orders.ship: web -> bff [browser_to_bff@1.json] stops: bff_to_gateway bff -> gw-a, bff -> gw-b and bff -> gw-c do not carry "orders.ship"`,
	}
	if diff := cmp.Diff(want, summary(g)); diff != "" {
		t.Errorf("chains (-want +got):\n%s", diff)
	}
	if s := g.Chains[2].Stop; s.Next != boundary.BFFToGateway || s.At != "bff" || len(s.Lacking) != 3 {
		t.Errorf("stop = %+v", s)
	}
	if g.OnChain(docs[3]) || g.OnChain(docs[5]) {
		t.Error("2c.json and 4.json carry no chain's operation, but are on a chain")
	}
	for _, tc := range []struct {
		doc  *Facts
		prev boundary.Kind
		n    int
	}{{docs[3], boundary.BrowserToBFF, 1}, {docs[4], boundary.BFFToGateway, 1}, {docs[5], boundary.GatewayToAdapter, 0}, {docs[0], "", 0}} {
		if prev, n := g.Upstream(tc.doc); prev != tc.prev || n != tc.n {
			t.Errorf("Upstream(%s) = %q, %d; want %q, %d", tc.doc.Path, prev, n, tc.prev, tc.n)
		}
	}
}

func TestBuildEmbeddedPolicy(t *testing.T) {
	embedded := strings.Replace(hop(boundary.GatewayToAdapter, "gw", "orders", "orders.create"),
		`"operations"`, `"adapter": {"service": "orders"}, "operations"`, 1)
	misnamed := strings.Replace(hop(boundary.GatewayToAdapter, "gw2", "orders", "orders.create"),
		`"operations"`, `"adapter": {"service": "order"}, "operations"`, 1)
	docs := set(t,
		"1.json", hop(boundary.BrowserToBFF, "web", "bff", "orders.create"),
		"2.json", hop(boundary.BFFToGateway, "bff", "gw", "orders.create"),
		"3.json", embedded,
		// A standalone policy for the same service: the embedded one wins.
		"4.json", adapter("orders", "orders.create"),
		"5.json", hop(boundary.BrowserToBFF, "app", "bff2", "orders.create"),
		"6.json", hop(boundary.BFFToGateway, "bff2", "gw2", "orders.create"),
		"7.json", misnamed,
	)
	g := Build(docs[:4])
	want := []string{"orders.create: web -> bff -> gw -> orders [browser_to_bff@1.json bff_to_gateway@2.json gateway_to_adapter@3.json adapter@3.json]"}
	if diff := cmp.Diff(want, summary(g)); diff != "" {
		t.Errorf("chains (-want +got):\n%s", diff)
	}
	last := g.Chains[0].Last()
	if !last.Embedded() || !last.Owner() || last.Doc != docs[2] || last.Endpoints() != "orders" {
		t.Errorf("policy hop: embedded %v, owner %v, endpoints %q", last.Embedded(), last.Owner(), last.Endpoints())
	}
	if g.OnChain(docs[3]) {
		t.Error("the standalone policy is on a chain though the edge embeds its own")
	}

	// Without the embedded policy's own name matching, the edge falls back
	// to standalone policies; here there is none for "orders" either.
	g = Build(docs[4:])
	want = []string{`orders.create: app -> bff2 -> gw2 -> orders [browser_to_bff@5.json bff_to_gateway@6.json gateway_to_adapter@7.json] stops: no adapter policy has service "orders" (the policy embedded under "adapter" names service "order")`}
	if diff := cmp.Diff(want, summary(g)); diff != "" {
		t.Errorf("chains (-want +got):\n%s", diff)
	}
}

func TestBuildCountsUnlinkable(t *testing.T) {
	docs := set(t,
		"1.json", hop(boundary.BrowserToBFF, "web", "bff", "orders.create"),
		"2.json", `{"boundary": "bff_to_gateway", "to": "gw", "operations": []}`, // no from
		"3.json", `{"boundary": "gateway_to_edge", "from": "gw", "to": "x"}`, // unknown kind
		"4.json", `{"boundary": "adapter", "operations": []}`, // no service
		"5.json", `{"boundary": "gateway_to_adapter", "from": "gw", "to": "x", "adapter": {}}`, // embedded policy without service
	)
	g := Build(docs)
	if g.Unlinkable != 4 {
		t.Errorf("Unlinkable = %d, want 4", g.Unlinkable)
	}
	want := []string{`orders.create: web -> bff [browser_to_bff@1.json] stops: no bff_to_gateway document has from "bff"`}
	if diff := cmp.Diff(want, summary(g)); diff != "" {
		t.Errorf("chains (-want +got):\n%s", diff)
	}
}

func TestBuildDuplicateEdgesAndOperations(t *testing.T) {
	dupOp := strings.Replace(hop(boundary.BrowserToBFF, "web", "bff", "orders.create", "orders.create"), `"POST"`, `"GET"`, 1)
	docs := set(t,
		"1.json", dupOp,
		// Two documents describe the same hop for one operation, as the
		// runner hands them over, sorted by path: chains use the first,
		// the second is a duplicate (IDL211).
		"2a.json", hop(boundary.BFFToGateway, "bff", "gw", "orders.create"),
		"2b.json", hop(boundary.BFFToGateway, "bff", "gw", "orders.create"),
	)
	g := Build(docs)
	want := []string{
		`orders.create: web -> bff -> gw [browser_to_bff@1.json bff_to_gateway@2a.json] stops: no gateway_to_adapter document has from "gw"`,
	}
	if diff := cmp.Diff(want, summary(g)); diff != "" {
		t.Errorf("chains (-want +got):\n%s", diff)
	}
	if len(g.Duplicates) != 1 || g.Duplicates[0].Doc != docs[2] || g.Duplicates[0].First != docs[1] || g.Duplicates[0].Operation != "orders.create" {
		t.Errorf("Duplicates = %+v, want 2b.json duplicating 2a.json for orders.create", g.Duplicates)
	}
	// The first of two operations with one key is the one that links.
	if g.Chains[0].StateChanging() {
		t.Error("the chain follows the second orders.create (POST), want the first (GET)")
	}
}

// Reused component ids must not multiply chains: k copies of one flow give
// one chain and k-1 duplicates per hop, not k^4 paths.
func TestBuildStaysLinearInCopies(t *testing.T) {
	var pairs []string
	const copies = 30
	for i := range copies {
		n := strconv.Itoa(i)
		pairs = append(pairs,
			n+"-1.json", hop(boundary.BrowserToBFF, "web", "bff", "orders.create"),
			n+"-2.json", hop(boundary.BFFToGateway, "bff", "gw", "orders.create"),
			n+"-3.json", hop(boundary.GatewayToAdapter, "gw", "orders", "orders.create"),
		)
	}
	g := Build(set(t, pairs...))
	if len(g.Chains) != 1 || len(g.Duplicates) != 3*(copies-1) {
		t.Errorf("%d copies: %d chains and %d duplicates, want 1 and %d", copies, len(g.Chains), len(g.Duplicates), 3*(copies-1))
	}
}

func TestFates(t *testing.T) {
	browser := func(extra string) string {
		return `{"boundary": "browser_to_bff", "from": "web", "to": "bff", "operations": [{"operation_key": "o", "method": "POST", "path": "/"}]` + extra + `}`
	}
	gateway := func(extra string) string {
		return `{"boundary": "bff_to_gateway", "from": "bff", "to": "gw", "operations": [{"operation_key": "o", "method": "POST", "path": "/"}]` + extra + `}`
	}
	const required = `, "http_idempotency": {"header": "Idempotency-Key", "require_key": {"operations": ["o"]}}`
	tests := []struct {
		name, browser, gateway string
		want                   []string // fate and detail per hop
	}{{
		name:    "mixed case passes, absent list drops",
		browser: browser(`, "cors_allowed_headers": ["IDEMPOTENCY-KEY"], "header_to_allow_inbound": ["*"]` + required),
		gateway: gateway(`, "header_to_allow_inbound": ["idempotency-key"]`),
		want:    []string{"required ", "dropped no header_to_allow_outbound"},
	}, {
		name:    "lists lacking the chain's header, key not required",
		browser: browser(`, "cors_allowed_headers": ["content-type"], "header_to_allow_inbound": ["idempotency-key"], "http_idempotency": {"header": "idempotency-key"}`),
		gateway: gateway(`, "header_to_allow_inbound": ["idempotency-key"], "header_to_allow_outbound": ["idempotency-key"], "http_idempotency": {"header": "x-other"}`),
		want:    []string{"dropped cors_allowed_headers lacks idempotency-key", "forwarded "},
	}, {
		name:    "no http_idempotency anywhere: the default header",
		browser: browser(`, "cors_allowed_headers": ["x-idempotency-key"], "header_to_allow_inbound": ["x-idempotency-key"]`),
		gateway: gateway(`, "header_to_allow_inbound": [], "header_to_allow_outbound": ["x-idempotency-key"]`),
		want:    []string{"not required http_idempotency.require_key does not cover the operation", "dropped header_to_allow_inbound lacks x-idempotency-key"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := Build(set(t, "1.json", tc.browser, "2.json", tc.gateway))
			c := g.Chains[0]
			var got []string
			for i := range c.Hops {
				f := c.FateAt(i)
				got = append(got, f.Fate.String()+" "+f.Detail(c.KeyHeader()))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fates (-want +got):\n%s", diff)
			}
			if !c.Broken() {
				t.Error("an incomplete chain is not Broken")
			}
		})
	}
}

func TestAdapterFates(t *testing.T) {
	head := set(t,
		"1.json", hop(boundary.BrowserToBFF, "web", "bff", "o"),
		"2.json", hop(boundary.BFFToGateway, "bff", "gw", "o"),
		"3.json", hop(boundary.GatewayToAdapter, "gw", "svc", "o"),
	)
	tests := []struct {
		policy string
		want   Fate
	}{
		{adapter("svc", "o"), Owned},
		{strings.Replace(adapter("svc", "o"), `"owner"`, `"passthrough"`, 1), NotOwned},
		{strings.Replace(adapter("svc", "o"), `"POST"`, `"PUT"`, 1), NotRequired},
		{strings.Replace(adapter("svc", "o"), `"operations"`, `"header_to_allow_inbound": ["content-type"], "operations"`, 1), Dropped},
		{strings.Replace(adapter("svc", "o"), `"operations"`, `"header_to_allow_inbound": ["X-Idempotency-Key"], "operations"`, 1), Owned},
	}
	for _, tc := range tests {
		g := Build(append(head[:3:3], doc(t, "4.json", tc.policy)))
		c := g.Chains[0]
		if got := c.FateAt(3).Fate; got != tc.want {
			t.Errorf("%s: fate %v, want %v", tc.policy, got, tc.want)
		}
		if c.Broken() != tc.want.Broken() {
			t.Errorf("%s: Broken() = %v", tc.policy, c.Broken())
		}
	}
}

// BenchmarkBuild links a set shaped like a large organisation's: flows of
// four documents, ten BFFs sharing each gateway, and a second, read-only
// operation per flow.
func BenchmarkBuild(b *testing.B) {
	for _, flows := range []int{1000, 2500} {
		var docs []*Facts
		for i := range flows {
			op, read := fmt.Sprintf("svc%d.create", i), fmt.Sprintf("svc%d.get", i)
			bff, gw, svc := fmt.Sprintf("bff-%d", i), fmt.Sprintf("gw-%d", i/10), fmt.Sprintf("svc-%d", i)
			docs = append(docs,
				doc(b, fmt.Sprintf("%d/1.json", i), hop(boundary.BrowserToBFF, "web", bff, op, read)),
				doc(b, fmt.Sprintf("%d/2.json", i), hop(boundary.BFFToGateway, bff, gw, op, read)),
				doc(b, fmt.Sprintf("%d/3.json", i), hop(boundary.GatewayToAdapter, gw, svc, op, read)),
				doc(b, fmt.Sprintf("%d/4.json", i), adapter(svc, op, read)),
			)
		}
		b.Run(fmt.Sprintf("docs=%d", len(docs)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if g := Build(docs); len(g.Chains) != 2*flows {
					b.Fatalf("%d chains, want %d", len(g.Chains), 2*flows)
				}
			}
		})
	}
}

// TestFirstsTellCollidingHopsApart makes two hops share an entry, as a
// hash collision would, and checks neither is taken for the other.
func TestFirstsTellCollidingHopsApart(t *testing.T) {
	edge := func(path, from, to string) *Facts {
		d := &Facts{Path: path, Kind: boundary.BFFToGateway}
		d.From.Value, d.To.Value = from, to
		d.Operations.Items = []Operation{{}}
		d.Operations.Items[0].Key = boundary.String{Field: boundary.Field{State: boundary.Valid}, Value: "orders.create"}
		return d
	}
	a, b := edge("a.json", "bff", "gw-1"), edge("b.json", "bff", "gw-2")
	ka, kb := hopOf(a, "orders.create"), hopOf(b, "orders.create")
	f := firsts{byEntry: map[entry]firstHop{}, docs: []*Facts{a, b}, seed: maphash.MakeSeed()}
	f.byEntry[f.entryOf(ka)] = firstHop{di: 1} // b's hop sits where a's hashes
	if got := f.claim(ka, firstHop{di: 0}); got != nil {
		t.Fatalf("claim(a's hop) = %s before a was recorded, want none", got.Path)
	}
	if got := f.claim(ka, firstHop{di: 1}); got != a {
		t.Fatalf("claim(a's hop) = %v once a was recorded, want a.json", got)
	}
	if got := f.docs[f.byEntry[f.entryOf(ka)].di]; got != b {
		t.Fatalf("the entry's first hop became %s, want b.json kept", got.Path)
	}
	if kb == ka {
		t.Fatal("the two hops have the same key")
	}
}

// Chains sort by name, which the sort compares without building it where
// the operation keys differ: a key that begins another ("orders.create",
// "orders.create.bulk") sorts after it, since ": " follows "." in the
// name, and chains of one key sort by the components they go through.
func TestChainsSortByName(t *testing.T) {
	g := Build(set(t,
		"1.json", hop(boundary.BrowserToBFF, "web", "bff", "orders.create", "orders.create.bulk", "orders.a"),
		"2.json", hop(boundary.BrowserToBFF, "app", "bff", "orders.create"),
		"3.json", hop(boundary.BrowserToBFF, "web", "a-bff", "orders.create.bulk"),
	))
	var got []string
	for _, c := range g.Chains {
		got = append(got, c.Name())
	}
	want := []string{
		"orders.a: web -> bff",
		"orders.create.bulk: web -> a-bff",
		"orders.create.bulk: web -> bff",
		"orders.create: app -> bff",
		"orders.create: web -> bff",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chains in the wrong order (-want +got):\n%s", diff)
	}
}
