package conform

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestTally(t *testing.T) {
	resps := []*response{
		{status: 201}, {status: 409}, {status: 409},
		{err: fmt.Errorf("%w: timed out", errNoAnswer)},
		{err: errors.New("201 answer with a body over 196608 bytes")},
	}
	if got, want := tally(resps), "201 x1, 409 x2, no answer x1, unreadable answer x1"; got != want {
		t.Errorf("tally = %q, want %q", got, want)
	}
}

func TestCodeElsewhere(t *testing.T) {
	for _, tt := range []struct{ body, want, at string }{
		{`{"code":"idempotency_key_reused"}`, "idempotency_key_reused", "/code"},
		{`{"error":{"code":"idempotency_key_reused"}}`, "idempotency_key_reused", "/error/code"},
		{`{"error":{"type":"conflict"}}`, "", "/error/type"}, // any code-like member when no code is declared
		{`{"error_code":"other"}`, "idempotency_key_reused", ""},
		{`not json`, "x", ""},
	} {
		if got := codeElsewhere([]byte(tt.body), tt.want); got != tt.at {
			t.Errorf("codeElsewhere(%s, %q) = %q, want %q", tt.body, tt.want, got, tt.at)
		}
	}
}

func TestPreview(t *testing.T) {
	for _, tt := range []struct {
		body  string
		width int
		want  string
	}{
		{`{"a":1}`, 20, `{"a":1}`},
		{strings.Repeat("x", 30), 20, "xxxxxx... (30 bytes)"},
		{"\x00\xff", 20, `"\x00\xff"`},
	} {
		if got := preview([]byte(tt.body), nil, tt.width); got != tt.want {
			t.Errorf("preview(%q, %d) = %q, want %q", tt.body, tt.width, got, tt.want)
		}
	}
}
