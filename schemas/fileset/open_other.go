//go:build !unix

package fileset

// openNonblock is 0 where a checked tree holds no named pipe to block on.
const openNonblock = 0
