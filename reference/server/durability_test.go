package server

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/idemlint/idemlint/reference"
)

// reportingStore is a store whose durability report is fixed.
type reportingStore struct {
	*reference.MemoryStore
	warnings []string
	read     bool
	err      error
}

func (s *reportingStore) Durability(context.Context) ([]string, bool, error) {
	return s.warnings, s.read, s.err
}

// TestStoreWarnings: each warning is logged and returned; settings that
// cannot be read are logged as such; a store without a report has none.
func TestStoreWarnings(t *testing.T) {
	mem := reference.NewMemoryStore(reference.MemoryOptions{})
	for _, tt := range []struct {
		name  string
		store reference.Store
		want  []string
		log   string
	}{
		{"no report", mem, nil, ""},
		{"warnings", &reportingStore{MemoryStore: mem, warnings: []string{"Redis persists nothing"}, read: true}, []string{"Redis persists nothing"}, `msg="idempotency store: records can be lost" warning="Redis persists nothing"`},
		{"unreadable", &reportingStore{MemoryStore: mem}, nil, "does not let its persistence and eviction settings be read"},
		{"failed", &reportingStore{MemoryStore: mem, err: errors.New("connection refused")}, nil, `cannot read its persistence and eviction settings" error="connection refused"`},
	} {
		var log strings.Builder
		got := StoreWarnings(context.Background(), tt.store, newTextLogger(&log))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if tt.log == "" && log.Len() != 0 || !strings.Contains(log.String(), tt.log) {
			t.Errorf("%s: log %q, want it to hold %q", tt.name, log.String(), tt.log)
		}
	}
}
