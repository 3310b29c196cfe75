package reference

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// TestFinishEncodingHeader: the header's JSON is json.Marshal's, for
// headers encoded in turn, alike, different, changed by their owner
// after the call, with nil and empty values.
func TestFinishEncodingHeader(t *testing.T) {
	changed := http.Header{"Content-Type": {"application/json"}}
	for i, h := range []http.Header{
		changed,
		{"Content-Type": {"text/html"}}, // what changed became after it was encoded
		{"Content-Type": {"application/json"}},
		{"Content-Type": {"application/json"}},
		{"Content-Type": {"text/plain"}},
		{"Content-Type": {"text/plain"}, "Location": {"/orders/1"}},
		{"Content-Type": nil},
		{"Content-Type": {}},
		{"Content-Type": {"a", "b"}},
		{"Content-Type": {"b", "a"}},
	} {
		want, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := FinishEncoding(Completed, Result{Response: Response{Status: 200, Header: h}})
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("FinishEncoding of %v = %s, %v; want %s", h, got, err, want)
		}
		if i == 0 {
			changed["Content-Type"][0] = "text/html" // after the call, as a handler may
		}
	}
	if got, err := FinishEncoding(Completed, Result{}); got != nil || err != nil {
		t.Errorf("FinishEncoding without a header = %s, %v; want nothing", got, err)
	}
	if _, err := FinishEncoding(Processing, Result{}); err == nil {
		t.Error("FinishEncoding to processing succeeded")
	}
}
