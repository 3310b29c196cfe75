package explain

import (
	"strings"
	"testing"

	"github.com/idemlint/idemlint/checks/lint"
)

func TestNoIDErrorNamesEveryRule(t *testing.T) {
	msg := NoIDError(lint.Rules).Error()
	if !strings.HasPrefix(msg, `explain needs a rule or probe id, e.g. "idemlint explain IDL102"; the rules are IDL001, `) {
		t.Errorf("NoIDError = %q", msg)
	}
	for _, r := range lint.Rules {
		if !strings.Contains(msg, r.ID+",") && !strings.Contains(msg, r.ID+" (") {
			t.Errorf("NoIDError does not name %s: %q", r.ID, msg)
		}
	}
}

func TestUnknownIDError(t *testing.T) {
	for _, tc := range []struct{ id, nearProbe, want string }{
		{"CF7", "CF07", `unknown rule or probe "CF7"; did you mean CF07? "idemlint probes" lists the probe ids`},
		{"idl-201", "", `unknown rule "idl-201"; did you mean "IDL201"?`},
		{"IDL999", "", `unknown rule or probe "IDL999"; "idemlint rules" and "idemlint probes" list the ids`},
	} {
		if got := UnknownIDError(lint.Rules, tc.id, tc.nearProbe).Error(); got != tc.want {
			t.Errorf("UnknownIDError(%q, %q) = %q, want %q", tc.id, tc.nearProbe, got, tc.want)
		}
	}
}
