package lint

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
)

// firstCollectionAt is the heap a check grows to before its first
// collection. A fresh process starts collecting at 4 MB and, on a set
// whose facts it keeps, collected 13-14 times on the way up on a 10k-file
// set, each cycle marking what was kept so far with the write barrier
// on. That, not start-up (6 ms of package init, 4 of them jsonschema's),
// output or reading files (the floor program walks and reads with the
// same code), is what "idemlint check" cost over the floor program beyond
// what the same check costs warm in process (BenchmarkCheck10k), whose
// heap is already grown: with GOGC=off the CLI ran at the floor's CPU.
// Deferring the first cycle leaves 3 on that set.
//
// Measured against the build before, 20 rounds alternating with the floor
// program (go build ./fixtures/floor) on 2 cores at load average 1.3-1.4:
// "check --no-config" of go run ./fixtures/gen -flows 2500 went from
// 0.45-0.69 s wall (1.21-1.92x the floor in the same round, median 1.36x)
// and 0.72-0.94 s CPU (median 1.28x) to 0.41-0.47 s wall (1.15-1.39x,
// median 1.26x) and 0.64-0.75 s CPU (1.16x); peak RSS 76-82 MB, now
// 77-83. On the 50k uniform set (-uniform -flows 12500) the peak is
// unchanged (255-287 MB, now 256-267, 3 rounds). The cost is on smaller
// sets, whose heap may now reach this size where it stayed under it: 4k
// files 42-45 MB, now 55-56; 1k files 24-25 MB, now 31-32 (and 30% less
// CPU). 64 MB cut 4 points more CPU on the 10k set but raised its peak by
// 4-6 MB; 32 MB saved less than half of what 48 does.
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
