package lint

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
)

// firstCollectionAt is the heap a check grows to before its first
// collection: a fresh process collects from 4 MB on, again and again while
// a large set's facts accumulate, and letting the heap reach 48 MB first
// saves most of that CPU for a few MB more peak memory on small sets
// (docs/performance.md, The check's first collection).
const firstCollectionAt = 48 << 20

// deferFirstCollection lets the heap reach limit before the first
// collection, then restores the collector's own pacing. It leaves the
// collector alone when GOGC or GOMEMLIMIT say how to run it, or when
// something in the process has already set it (another check deferring
// its first collection, or a collector turned off or limited).
func deferFirstCollection(limit int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	percent := debug.SetGCPercent(-1)
	if percent < 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		debug.SetGCPercent(percent)
		return
	}
	debug.SetMemoryLimit(limit)
	// The sentinel is unreachable at once, so its cleanup runs after the
	// first cycle; it is larger than the tiny allocator's blocks, which
	// could keep it alive.
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(percent int) {
		debug.SetMemoryLimit(math.MaxInt64)
		debug.SetGCPercent(percent)
	}, percent)
}
