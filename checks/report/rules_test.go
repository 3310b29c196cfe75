package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/checks"
)

// Every format of WriteRules lists every rule once, in order.
func TestWriteRules(t *testing.T) {
	rules := checks.Core
	var text, md, js strings.Builder
	for w, format := range map[*strings.Builder]string{&text: "text", &md: "markdown", &js: "json"} {
		if err := WriteRules(w, rules, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
	}
	textLines := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n")
	mdLines := strings.Split(strings.TrimSuffix(md.String(), "\n"), "\n")
	var decoded []struct {
		ID            string `json:"id"`
		Severity      string `json:"severity"`
		CrossDocument bool   `json:"cross_document"`
	}
	if err := json.Unmarshal([]byte(js.String()), &decoded); err != nil {
		t.Fatal(err)
	}
	if len(textLines) != len(rules)+1 || len(mdLines) != len(rules)+2 || len(decoded) != len(rules) {
		t.Fatalf("%d rules, but %d text lines, %d markdown lines, %d json objects", len(rules), len(textLines), len(mdLines), len(decoded))
	}
	for i, r := range rules {
		if !strings.HasPrefix(textLines[i+1], r.ID+"  ") {
			t.Errorf("text line %d = %q, want %s", i+1, textLines[i+1], r.ID)
		}
		if want := "| <a id=\"" + RuleAnchor(r.ID) + "\"></a>[" + r.ID + "](../fixtures/rules/" + r.ID + "/) | " + r.Severity.String() + " |"; !strings.HasPrefix(mdLines[i+2], want) {
			t.Errorf("markdown line %d = %q, want it to start %q", i+2, mdLines[i+2], want)
		}
		if d := decoded[i]; d.ID != r.ID || d.Severity != r.Severity.String() || d.CrossDocument != r.CrossDocument() {
			t.Errorf("json %d = %+v, want %s %s %v", i, d, r.ID, r.Severity, r.CrossDocument())
		}
	}
	if err := WriteRules(&text, rules, "yaml"); err == nil || err.Error() != `unknown format "yaml" (want json, markdown, text)` {
		t.Errorf("WriteRules(yaml) = %v", err)
	}
}
