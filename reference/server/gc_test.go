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

// TestCollectFor: serve lowers GOGC for the memory store, raises it for
// the others, and restores it, unless the environment chose one.
func TestCollectFor(t *testing.T) {
	for _, c := range []struct {
		name    string
		collect func() func()
		percent int
	}{{"memory", CollectForMemoryStore, MemoryStoreGCPercent}, {"external", CollectForExternalStore, ExternalStoreGCPercent}} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOGC", "")
			os.Unsetenv("GOGC") // t.Setenv restores the environment after the test
			before := gcPercent()
			restore := c.collect()
			if got := gcPercent(); got != c.percent {
				t.Errorf("GOGC with the environment silent: %d, want %d", got, c.percent)
			}
			restore()
			if got := gcPercent(); got != before {
				t.Errorf("GOGC after restore: %d, want %d", got, before)
			}

			t.Setenv("GOGC", "150")
			restore = c.collect()
			defer restore()
			if got := gcPercent(); got != before {
				t.Errorf("GOGC with the environment's own: %d, want it left at %d", got, before)
			}
		})
	}
}
