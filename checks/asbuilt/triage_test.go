package asbuilt

import (
	"bytes"
	"fmt"
	"testing"
	"unicode/utf8"
)

// triageCases are documents triage decides (skip, or empty) and ones it
// must leave to the full parse.
var triageCases = []struct {
	doc  string
	want verdict
}{
	{"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: orders\n", skipIt},
	{"---\napiVersion: v1 # core\nkind: Service\nspec: {ports: [{port: 80}]}\n", skipIt},
	{"--- # a comment\nkind: ConfigMap\napiVersion: v1\ndata:\n  LOG: info\n", skipIt},
	{"kind: NetworkPolicy\nspec:\n  policyTypes: [Ingress]\n", skipIt},
	{"kind: Role\nrules:\n- apiGroups: ['']\n  resources: [pods]\n", skipIt},
	{"metadata: {name: a}\nspec: {}\n", skipIt},
	{"# only a comment\n\n", emptyDoc},
	{"---\n", emptyDoc},
	{"kind: VirtualService\n", parseIt},
	{"apiVersion: v2\nkind: HTTPRoute\n", parseIt},
	{"kind: List\nitems: []\n", parseIt},
	{"kind: ConfigMap\nmetadata: {name: istio}\n", parseIt},
	{"kind: ConfigMap\nmetadata: {name: \"\\x69stio\"}\n", parseIt},
	{"openapi: 3.0.1\npaths: {}\n", parseIt},
	{"_format_version: \"3.0\"\nservices: []\n", parseIt},
	{"static_resources:\n  clusters: []\n", parseIt},
	{"name: local_route\nvirtual_hosts: []\n", parseIt},
	{"configs:\n- \"@type\": type.googleapis.com/envoy.admin.v3.RoutesConfigDump\n", parseIt},
	{"kind: Virtual\n  Service\n", parseIt},
	{"kind: \"VirtualService\"\n", parseIt},
	{"kind: &k Deployment\n", parseIt},
	{"kind: !!str Deployment\n", parseIt},
	{"kind: Deployment\nkind: VirtualService\n", parseIt},
	{"apiVersion: !!binary eHl6\nkind: Deployment\n", parseIt},
	{"apiVersion: {group: x}\nkind: Deployment\n", parseIt},
	{"kind: null\n", parseIt},
	{"<<: {kind: VirtualService}\n", parseIt},
	{"{\"kind\": \"Deployment\"}\n", parseIt},
	{"  kind: Deployment\n", parseIt},
	{"- kind: Deployment\n", parseIt},
	{"--- kind: Deployment\n", parseIt},
	{"\"kind\": Deployment\n", parseIt},
	// Line breaks the YAML parser knows beside "\n".
	{"apiVersion: networking.istio.io/v1\nmetadata: {name: a}\rkind: VirtualService\n", parseIt},
	{"apiVersion: networking.istio.io/v1\nmetadata: {name: a}\u2028kind: VirtualService\n", parseIt},
	{"apiVersion: networking.istio.io/v1\nmetadata: {name: a}\u0085kind: VirtualService\n", parseIt},
	{"kind: Deployment\r\nmetadata: {name: a}\r\n", skipIt},
	// No word of a kind read, but an escape spells one.
	{"apiVersion: networking.istio.io/v1\nkind: \"Virtual\\x53ervice\"\nmetadata: {name: a}\n", parseIt},
}

func TestTriage(t *testing.T) {
	for _, tt := range triageCases {
		if got, _ := triage([]byte(tt.doc)); got != tt.want {
			t.Errorf("triage(%q) = %d, want %d", tt.doc, got, tt.want)
		}
	}
}

// FuzzTriage holds triage to the full parse: whenever it decides, a full
// parse of the document that succeeds reads nothing from it and finds no
// problem in it, and counts it skipped exactly when triage says so.
// (A document triage skips is not parsed, so one that would not parse
// is skipped too, as an unrelated file is.) Where triage is not sure,
// the word test of mayHold decides instead: a document it skips reads
// nothing when parsed.
func FuzzTriage(f *testing.F) {
	for _, tt := range triageCases {
		f.Add([]byte(tt.doc))
	}
	addReaderManifests(f)
	addBenchManifests(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) || bytes.HasPrefix(data, []byte("%")) || bytes.Contains(data, []byte("\n%")) {
			return // read whole, without triage
		}
		for _, doc := range documents(data) {
			v, kind := triage(doc)
			if v == parseIt && mayHold(doc) {
				continue
			}
			full := &fileRead{reader: newReader("f.yaml", len(doc))}
			if full.parseDocuments(doc) != nil {
				continue
			}
			skipped, ofKind := 0, 0
			for _, k := range full.skipped {
				skipped += k.n
				if k.kind == string(kind) {
					ofKind = k.n
				}
			}
			read := fmt.Sprintf("%d resources, %d configurations, %d skipped %v, problems %v", len(full.resources), len(full.configs), skipped, full.skipped, full.problems)
			switch {
			case v == parseIt && len(full.resources)+len(full.configs) > 0:
				t.Errorf("mayHold skips %q, the parse reads %s", doc, read)
			case v == skipIt && (len(full.resources)+len(full.configs)+len(full.problems) > 0 || ofKind != 1 || skipped != 1):
				t.Errorf("triage skips %q, the parse reads %s", doc, read)
			case v == emptyDoc && (len(full.resources)+len(full.configs)+len(full.problems) > 0 || skipped != 0):
				t.Errorf("triage finds %q empty, the parse reads %s", doc, read)
			}
		}
	})
}
