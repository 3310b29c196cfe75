//go:build !unix

package fileset

import "io/fs"

// dirID identifies a directory however it is reached: here by its path
// with links resolved, which costs time in the depth of the tree.
type dirID struct{ path string }

func identify(dir string, _ fs.FileInfo) (dirID, error) {
	real, err := realPath(dir)
	return dirID{real}, err
}
