package lint

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent reads the collector's percent, which only setting it returns.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestDeferFirstCollectionRestoresPacing(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	want := gcPercent()
	if want < 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Skip("the collector is set from outside the test")
	}
	const limit = 1 << 40 // never reached: the test collects itself
	deferFirstCollection(limit)
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("memory limit %d while the first collection is deferred, want %d", got, limit)
	}
	// A second check in the process finds the collector set and leaves it.
	deferFirstCollection(limit / 2)
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("memory limit %d after a second call, want %d", got, limit)
	}
	// The cleanup runs on its own goroutine after a cycle: poll a bounded
	// number of times rather than wait on a clock.
	for i := 0; i < 10000 && debug.SetMemoryLimit(-1) != math.MaxInt64; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("memory limit %d after collections, want none", got)
	}
	if got := gcPercent(); got != want {
		t.Errorf("GC percent %d after the first collection, want %d", got, want)
	}
}

func TestDeferFirstCollectionLeavesGOGC(t *testing.T) {
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "100")
			if debug.SetMemoryLimit(-1) != math.MaxInt64 {
				t.Skip("the collector is limited from outside the test")
			}
			deferFirstCollection(1 << 40)
			if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
				debug.SetMemoryLimit(math.MaxInt64)
				t.Fatalf("with %s set, memory limit %d, want none", env, got)
			}
		})
	}
}
