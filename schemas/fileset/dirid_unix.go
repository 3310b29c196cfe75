//go:build unix

package fileset

import (
	"fmt"
	"io/fs"
	"syscall"
)

// dirID identifies a directory however it is reached.
type dirID struct{ dev, ino uint64 }

// identify reads the identity of dir from its Stat, at no system call.
func identify(dir string, info fs.FileInfo) (dirID, error) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return dirID{}, fmt.Errorf("no device and inode for %s", dir)
	}
	return dirID{uint64(st.Dev), uint64(st.Ino)}, nil
}
