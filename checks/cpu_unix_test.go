//go:build unix

package checks_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has spent
// on all its threads, the garbage collector's included.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
