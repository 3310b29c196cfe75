package asbuilt

import (
	"strings"
	"testing"
)

// TestHAProxyDisableL7RetryConditions: the methods a disable-l7-retry
// condition covers; ACLs side by side must all hold.
func TestHAProxyDisableL7RetryConditions(t *testing.T) {
	for _, tt := range []struct {
		cond  string
		want  string
		every bool
		ok    bool
	}{
		{"", "", true, true},
		{"if METH_POST", "POST", false, true},
		{"if METH_POST || METH_PATCH", "POST PATCH", false, true},
		{"if METH_POST or METH_PUT", "POST PUT", false, true},
		{"if METH_POST METH_PUT", "", false, true}, // both never hold
		{"if METH_POST METH_POST", "POST", false, true},
		{"if { method POST PUT }", "POST PUT", false, true},
		{"if { path_beg /api }", "", false, false},
		{"unless METH_GET", "", false, false},
		{"if METH_POST !is_api", "", false, false},
	} {
		methods, every, ok := haMethods(strings.Fields(tt.cond))
		if got := strings.Join(methods, " "); got != tt.want || every != tt.every || ok != tt.ok {
			t.Errorf("%q: methods %q every %v ok %v; want %q %v %v", tt.cond, got, every, ok, tt.want, tt.every, tt.ok)
		}
	}
}
