package chain_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemlint/idemlint/checks/chain"
	"github.com/idemlint/idemlint/checks/report"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// renderSet has one chain whose BFF edge drops the key, one that is whole,
// one that stops at a gateway with no edge onward, and a read-only
// operation.
func renderSet(t *testing.T) *chain.Graph {
	t.Helper()
	withGet := strings.Replace(chain.TestHop(boundary.BrowserToBFF, "web", "bff", "orders.create", "orders.cancel"),
		`"operations": [`, `"operations": [{"operation_key": "orders.get", "method": "GET", "path": "/x"}, `, 1)
	dropping := strings.Replace(chain.TestHop(boundary.BFFToGateway, "bff", "gw", "orders.create", "orders.cancel", "orders.get"),
		`"header_to_allow_outbound": ["x-idempotency-key"]`, `"header_to_allow_outbound": ["content-type"]`, 1)
	return chain.Build(chain.TestSet(t,
		"1.json", withGet,
		"2.json", dropping,
		"3.json", chain.TestHop(boundary.GatewayToAdapter, "gw", "orders", "orders.create", "orders.cancel", "orders.get"),
		"4.json", chain.TestAdapter("orders", "orders.create", "orders.cancel", "orders.get"),
		"5.json", chain.TestHop(boundary.BrowserToBFF, "web", "pay-bff", "pay.charge"),
		"6.json", chain.TestHop(boundary.BFFToGateway, "pay-bff", "pay-gw", "pay.charge"),
	))
}

func render(t *testing.T, g *chain.Graph, format string) string {
	t.Helper()
	var b strings.Builder
	if err := report.Graph(&b, g, format); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRenderText(t *testing.T) {
	want := `orders.cancel: web -> bff -> gw -> orders  (key x-idempotency-key)  BROKEN
  browser_to_bff      web -> bff    required   1.json:1:207
  bff_to_gateway      bff -> gw     DROPPED    2.json:1:142  header_to_allow_outbound lacks x-idempotency-key
  gateway_to_adapter  gw -> orders  forwarded  3.json:1:149
  adapter             orders        owned      4.json:1:129

orders.create: web -> bff -> gw -> orders  (key x-idempotency-key)  BROKEN
  browser_to_bff      web -> bff    required   1.json:1:139
  bff_to_gateway      bff -> gw     DROPPED    2.json:1:74  header_to_allow_outbound lacks x-idempotency-key
  gateway_to_adapter  gw -> orders  forwarded  3.json:1:81
  adapter             orders        owned      4.json:1:61

pay.charge: web -> pay-bff -> pay-gw  (key x-idempotency-key)  BROKEN
  browser_to_bff  web -> pay-bff     required   5.json:1:79
  bff_to_gateway  pay-bff -> pay-gw  forwarded  6.json:1:82
  STOPS: no gateway_to_adapter document has from "pay-gw"

3 state-changing chains, 3 broken
read-only operations, not shown: orders.get
`
	if diff := cmp.Diff(want, render(t, renderSet(t), "text")); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

func TestRenderMermaid(t *testing.T) {
	want := `flowchart LR
  n0["web"]
  n1["bff"]
  n2["gw"]
  n3["orders"]
  n4[("orders policy")]
  n5["pay-bff"]
  n6["pay-gw"]
  n7["no gateway_to_adapter from pay-gw"]:::missing
  n0 -->|"orders.cancel, orders.create: required"| n1
  n1 -->|"orders.cancel, orders.create: dropped at header_to_allow_outbound"| n2
  n2 -->|"orders.cancel, orders.create: forwarded"| n3
  n3 -->|"orders.cancel, orders.create: owned"| n4
  n0 -->|"pay.charge: required"| n5
  n5 -->|"pay.charge: forwarded"| n6
  n6 -.->|"pay.charge: stops"| n7
  linkStyle 1,6 stroke:red,stroke-width:2px,color:red
  classDef missing stroke:red,stroke-dasharray:4 4,color:red
`
	if diff := cmp.Diff(want, render(t, renderSet(t), "mermaid")); diff != "" {
		t.Errorf("mermaid (-want +got):\n%s", diff)
	}
}

func TestRenderDOT(t *testing.T) {
	want := `digraph idemlint {
  rankdir=LR;
  node [shape=box];
  n0 [label="web"];
  n1 [label="bff"];
  n2 [label="gw"];
  n3 [label="orders"];
  n4 [label="orders policy", shape=cylinder];
  n5 [label="pay-bff"];
  n6 [label="pay-gw"];
  n7 [label="no gateway_to_adapter from pay-gw", style=dashed, color=red, fontcolor=red];
  n0 -> n1 [label="orders.cancel, orders.create: required"];
  n1 -> n2 [label="orders.cancel, orders.create: dropped at header_to_allow_outbound", color=red, fontcolor=red, penwidth=2];
  n2 -> n3 [label="orders.cancel, orders.create: forwarded"];
  n3 -> n4 [label="orders.cancel, orders.create: owned"];
  n0 -> n5 [label="pay.charge: required"];
  n5 -> n6 [label="pay.charge: forwarded"];
  n6 -> n7 [label="pay.charge: stops", color=red, fontcolor=red, penwidth=2, style=dashed];
}
`
	if diff := cmp.Diff(want, render(t, renderSet(t), "dot")); diff != "" {
		t.Errorf("dot (-want +got):\n%s", diff)
	}
}

// TestRenderDiagramsMarkWhatIsMissing draws stops where the next documents
// (edges, a policy) exist but do not carry the operation; it also draws a
// policy embedded in its edge, and escapes labels.
func TestRenderDiagramsMarkWhatIsMissing(t *testing.T) {
	embedded := strings.Replace(chain.TestHop(boundary.GatewayToAdapter, "gw", "svc", "a", "b"),
		`"operations"`, `"adapter": {"service": "svc"}, "operations"`, 1)
	g := chain.Build(chain.TestSet(t,
		"1.json", chain.TestHop(boundary.BrowserToBFF, "web", "bff", "a", "b", "c", `e"q`),
		"2.json", chain.TestHop(boundary.BFFToGateway, "bff", "gw", "a", "b"),
		"3.json", embedded,
		"4.json", chain.TestHop(boundary.BFFToGateway, "bff", "gw2", "c"),
		"5.json", chain.TestHop(boundary.GatewayToAdapter, "gw2", "svc2", "c"),
		"6.json", chain.TestAdapter("svc2", "a"),
	))
	want := `flowchart LR
  n0["web"]
  n1["bff"]
  n2["gw"]
  n3["svc"]
  n4[("svc policy (embedded in gw -> svc)")]
  n5["gw2"]
  n6["svc2"]
  n7["no adapter policy for svc2 carries it"]:::missing
  n8["no bff_to_gateway from bff carries it"]:::missing
  n0 -->|"a, b, c, e#quot;q: required"| n1
  n1 -->|"a, b: forwarded"| n2
  n2 -->|"a, b: forwarded"| n3
  n3 -->|"a, b: owned"| n4
  n1 -->|"c: forwarded"| n5
  n5 -->|"c: forwarded"| n6
  n6 -.->|"c: stops"| n7
  n1 -.->|"e#quot;q: stops"| n8
  linkStyle 6,7 stroke:red,stroke-width:2px,color:red
  classDef missing stroke:red,stroke-dasharray:4 4,color:red
`
	if diff := cmp.Diff(want, render(t, g, "mermaid")); diff != "" {
		t.Errorf("mermaid (-want +got):\n%s", diff)
	}
}

func TestRenderUnknownFormat(t *testing.T) {
	err := report.Graph(&strings.Builder{}, renderSet(t), "svg")
	if err == nil || err.Error() != `unknown format "svg" (want text, mermaid, dot)` {
		t.Errorf("err = %v", err)
	}
}

// twoSets are renderSet and a second set with the same component names,
// so that only unique ids keep their nodes apart.
func twoSets(t *testing.T) []report.SetGraph {
	t.Helper()
	second := chain.Build(chain.TestSet(t,
		"7.json", chain.TestHop(boundary.BrowserToBFF, "web", "bff", "orders.create"),
		"8.json", chain.TestHop(boundary.BFFToGateway, "bff", "gw", "orders.create"),
	))
	return []report.SetGraph{{Name: "shop", Graph: renderSet(t)}, {Name: "", Graph: second}}
}

func renderSets(t *testing.T, format string) []string {
	t.Helper()
	var b strings.Builder
	if err := report.Graphs(&b, twoSets(t), format); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

var (
	dotNode    = regexp.MustCompile(`^\s+(n\d+) \[label=`)
	dotEdge    = regexp.MustCompile(`^\s+(n\d+) -> (n\d+) \[`)
	mermaidDef = regexp.MustCompile(`^\s+(n\d+)\[`)
	mermaidArc = regexp.MustCompile(`^\s+(n\d+) -\.?->\|"[^"]*"\| (n\d+)$`)
)

// TestRenderSeveralSetsAsOneDOT parses the Graphviz output of two sets:
// one digraph, a cluster per set, every node defined once in one cluster,
// every edge between defined nodes of one cluster.
func TestRenderSeveralSetsAsOneDOT(t *testing.T) {
	lines := renderSets(t, "dot")
	var digraphs, depth int
	var clusters []string
	clusterOf := map[string]int{}
	var edges, red []int
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "digraph "):
			digraphs++
		case strings.HasPrefix(strings.TrimSpace(l), "subgraph cluster_"):
			clusters = append(clusters, strings.Fields(l)[1])
		case strings.HasPrefix(strings.TrimSpace(l), "label="):
			clusters[len(clusters)-1] += " " + strings.TrimSpace(l)
		}
		if m := dotNode.FindStringSubmatch(l); m != nil {
			if _, dup := clusterOf[m[1]]; dup {
				t.Errorf("node %s defined twice", m[1])
			}
			clusterOf[m[1]] = len(clusters)
		}
		if m := dotEdge.FindStringSubmatch(l); m != nil {
			from, okFrom := clusterOf[m[1]]
			to, okTo := clusterOf[m[2]]
			if !okFrom || !okTo || from != to || from != len(clusters) {
				t.Errorf("edge %s -> %s does not join two nodes of its own cluster", m[1], m[2])
			}
			if strings.Contains(l, "color=red") {
				red = append(red, len(edges))
			}
			edges = append(edges, len(edges))
		}
		depth += strings.Count(l, "{") - strings.Count(l, "}")
	}
	if digraphs != 1 || depth != 0 {
		t.Errorf("%d digraphs, braces unbalanced by %d; want one digraph, balanced:\n%s", digraphs, depth, strings.Join(lines, "\n"))
	}
	want := []string{`cluster_0 label="set shop";`, `cluster_1 label="files in no set";`}
	if diff := cmp.Diff(want, clusters); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if len(clusterOf) != 12 || len(edges) != 10 || len(red) != 3 {
		t.Errorf("%d nodes, %d edges, %d red; want 12, 10, 3", len(clusterOf), len(edges), len(red))
	}
}

// TestRenderSeveralSetsAsOneMermaid parses the Mermaid output of two sets:
// one flowchart, a subgraph per set, unique node ids, and linkStyle
// counting the links of the whole flowchart (the broken ones are those the
// DOT output draws red).
func TestRenderSeveralSetsAsOneMermaid(t *testing.T) {
	lines := renderSets(t, "mermaid")
	var flowcharts, open int
	var subgraphs []string
	defined := map[string]string{}
	var links int
	var linkStyle string
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "flowchart "):
			flowcharts++
		case strings.HasPrefix(trimmed, "subgraph "):
			subgraphs = append(subgraphs, strings.TrimPrefix(trimmed, "subgraph "))
			open++
		case trimmed == "end":
			open--
		case strings.HasPrefix(trimmed, "linkStyle "):
			linkStyle = strings.Fields(trimmed)[1]
		}
		if m := mermaidDef.FindStringSubmatch(l); m != nil {
			if _, dup := defined[m[1]]; dup {
				t.Errorf("node %s defined twice", m[1])
			}
			defined[m[1]] = subgraphs[len(subgraphs)-1]
		}
		if m := mermaidArc.FindStringSubmatch(l); m != nil {
			if defined[m[1]] == "" || defined[m[1]] != defined[m[2]] || defined[m[1]] != subgraphs[len(subgraphs)-1] {
				t.Errorf("link %s -> %s does not join two nodes of its own subgraph", m[1], m[2])
			}
			links++
		}
	}
	if flowcharts != 1 || open != 0 {
		t.Errorf("%d flowcharts, %d subgraphs left open; want 1, 0:\n%s", flowcharts, open, strings.Join(lines, "\n"))
	}
	want := []string{`s0["set shop"]`, `s1["files in no set"]`}
	if diff := cmp.Diff(want, subgraphs); diff != "" {
		t.Errorf("subgraphs (-want +got):\n%s", diff)
	}
	if len(defined) != 12 || links != 10 {
		t.Errorf("%d nodes, %d links; want 12, 10", len(defined), links)
	}
	var red []string
	for i, l := range matching(renderSets(t, "dot"), dotEdge) {
		if strings.Contains(l, "color=red") {
			red = append(red, strconv.Itoa(i))
		}
	}
	if got, want := linkStyle, strings.Join(red, ","); got != want {
		t.Errorf("linkStyle %s, want the DOT output's red edges %s", got, want)
	}
}

// TestRenderOneSetHasNoCluster keeps one set's diagrams as they were.
func TestRenderOneSetHasNoCluster(t *testing.T) {
	for _, format := range []string{"dot", "mermaid"} {
		var b strings.Builder
		if err := report.Graphs(&b, []report.SetGraph{{Name: "shop", Graph: renderSet(t)}}, format); err != nil {
			t.Fatal(err)
		}
		if got, want := b.String(), render(t, renderSet(t), format); got != want || strings.Contains(got, "subgraph") {
			t.Errorf("%s: one named set draws differently from Graph, or with a subgraph:\n%s", format, got)
		}
	}
}

// matching returns the lines matching re.
func matching(lines []string, re *regexp.Regexp) []string {
	var out []string
	for _, l := range lines {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}
