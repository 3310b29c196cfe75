//go:build unix

package fileset

import "syscall"

// openNonblock opens a named pipe without waiting for a writer, so that it
// is refused (notRegular) instead of blocking the run; it changes nothing
// for a regular file, and spares os.OpenFile the system calls that put a
// descriptor into and out of non-blocking mode.
const openNonblock = syscall.O_NONBLOCK
