package pgstore

import (
	"strings"
	"testing"
)

// TestStandbyWarning: a primary with standbys is reported unless its
// commits wait for one (synchronous_standby_names set, and
// synchronous_commit remote_write or higher).
func TestStandbyWarning(t *testing.T) {
	for _, tt := range []struct {
		standbys          int
		names, syncCommit string
		want              string // a telling part of the warning; "" for none
	}{
		{0, "", "on", ""},
		{1, "", "on", "asynchronously (synchronous_standby_names is empty)"},
		{2, "*", "local", "(synchronous_commit local)"},
		{1, "*", "off", "(synchronous_commit off)"},
		{1, "*", "remote_write", ""},
		{1, "FIRST 1 (s1)", "on", ""},
		{1, "*", "remote_apply", ""},
	} {
		got := standbyWarning(tt.standbys, tt.names, tt.syncCommit)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%d standbys, synchronous_standby_names %q, synchronous_commit %s: %q, want one saying %q", tt.standbys, tt.names, tt.syncCommit, got, tt.want)
		}
	}
}
