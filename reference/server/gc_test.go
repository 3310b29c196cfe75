package server

import (
	"os"
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's GOGC without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestCollectForMemoryStore: serve lowers GOGC for the memory store and
// restores it, unless the environment chose one.
func TestCollectForMemoryStore(t *testing.T) {
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC") // t.Setenv restores the environment after the test
	before := gcPercent()
	restore := CollectForMemoryStore()
	if got := gcPercent(); got != MemoryStoreGCPercent {
		t.Errorf("GOGC with the environment silent: %d, want %d", got, MemoryStoreGCPercent)
	}
	restore()
	if got := gcPercent(); got != before {
		t.Errorf("GOGC after restore: %d, want %d", got, before)
	}

	t.Setenv("GOGC", "150")
	restore = CollectForMemoryStore()
	defer restore()
	if got := gcPercent(); got != before {
		t.Errorf("GOGC with the environment's own: %d, want it left at %d", got, before)
	}
}
