// Package fileset turns the paths named on a command line into the sorted
// list of boundary files to check, and reads them with a size limit.
package fileset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// MaxFileSize bounds one boundary document. Real ones are a few KB; the
// limit keeps a stray multi-gigabyte file from exhausting memory.
const MaxFileSize = 8 << 20

// Collect expands paths: a file is taken as named (whatever its name); a
// directory is walked for "*.json" files, skipping dot-files and
// dot-directories (.git, .idemlint.json) and following symbolic links
// without ever visiting one directory twice. The result is sorted and free
// of duplicates. A named path that does not exist is an error; problems
// found while walking (an unreadable directory) are returned as Skipped so
// the rest of the set is still checked.
func Collect(paths []string) (files []string, skipped []Skipped, err error) {
	seen := map[string]bool{}
	visitedDirs := map[string]bool{}
	add := func(p string) {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, root := range paths {
		info, statErr := os.Stat(root)
		if statErr != nil {
			return nil, nil, fmt.Errorf("%s: %w", root, unwrapPathError(statErr))
		}
		if !info.IsDir() {
			add(root)
			continue
		}
		skipped = append(skipped, walk(root, visitedDirs, add)...)
	}
	sort.Strings(files)
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Path < skipped[j].Path })
	return files, skipped, nil
}

// Skipped is a path inside a walked directory that could not be read.
type Skipped struct {
	Path string
	Err  error
}

func walk(dir string, visited map[string]bool, add func(string)) []Skipped {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return []Skipped{{dir, unwrapPathError(err)}}
	}
	if visited[real] {
		return nil // a symlink loop or a second link to a walked directory
	}
	visited[real] = true
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []Skipped{{dir, unwrapPathError(err)}}
	}
	var skipped []Skipped
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			info, err := os.Stat(p)
			if err != nil {
				skipped = append(skipped, Skipped{p, fmt.Errorf("broken symbolic link: %w", unwrapPathError(err))})
				continue
			}
			mode = info.Mode().Type()
		}
		switch {
		case mode.IsDir():
			skipped = append(skipped, walk(p, visited, add)...)
		case mode.IsRegular() && strings.HasSuffix(name, ".json"):
			add(p)
		}
	}
	return skipped
}

// Read reads a file of at most MaxFileSize bytes. Like os.ReadFile it
// sizes the buffer from the file's size, so a file costs one allocation;
// the limit is enforced on what is read, not on what Stat claims. Only
// regular files are read: opening a named pipe would block until someone
// writes to it, and a device such as /dev/zero never ends.
func Read(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	switch mode := info.Mode(); {
	case mode.IsDir():
		return nil, errors.New("is a directory")
	case !mode.IsRegular():
		return nil, fmt.Errorf("not a regular file (%s)", describeType(mode))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	size := int(min(info.Size(), MaxFileSize)) + 1 // +1 to see EOF or excess
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if len(data) > MaxFileSize {
			return nil, fmt.Errorf("file is larger than the %d MiB limit for a boundary document", MaxFileSize>>20)
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, unwrapPathError(err)
		}
		if len(data) == cap(data) {
			data = slices.Grow(data, len(data)) // the file grew after Stat
		}
	}
}

// describeType names a non-regular file type for a message.
func describeType(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + mode.Type().String()
}

// unwrapPathError drops the path from a *fs.PathError: callers print the
// path themselves, and "open x: x: permission denied" reads badly.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
