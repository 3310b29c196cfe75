package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
)

// firstCollectionAt is the heap a check grows to before its first
// collection. A fresh process starts collecting at 4 MB and, on a set
// whose facts it keeps, collects a dozen times on the way up, each cycle
// marking what is kept so far with the write barrier on: that, not
// start-up, is most of what "idemlint check" costs over the floor program
// and over the same check run warm in process (see BenchmarkCheck10k).
// Below this size a small set costs at most this much memory; above it
// the collector paces as usual, so a large set's peak is unchanged.
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
