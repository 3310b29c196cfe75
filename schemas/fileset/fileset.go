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

// Options says which symbolic links Collect follows and which files of a
// walked directory it takes.
type Options struct {
	// Roots are directories, besides the named paths, that a symbolic
	// link may lead into: the configuration file's directory.
	Roots []string
	// FollowSymlinks follows links wherever they lead. Without it a link
	// whose target is outside the named paths and Roots is not read, so
	// that a change to the checked tree cannot make the check read the
	// files of the machine it runs on.
	FollowSymlinks bool
	// Include reports whether a file met in a walked directory is taken;
	// nil takes the files named "*.json".
	Include func(path string) bool
}

// Collect expands paths: a file is taken as named (whatever its name); a
// directory is walked for the files opts.Include takes, skipping dot-files
// and dot-directories (.git, .idemlint.json) and following symbolic links
// (see Options) without ever visiting one directory twice. The result is
// sorted and free of duplicates. A named path that does not exist is an
// error; problems found while walking (an unreadable directory, a link
// leaving the tree, a named pipe) are returned as Skipped so the rest of
// the set is still checked.
func Collect(paths []string, opts Options) (files []string, skipped []Skipped, err error) {
	return CollectEach(paths, opts, nil)
}

// CollectEach is Collect calling found, when it is not nil, with each file
// as the walk meets it, once, before Collect would return them all: a
// reader can start on the first files while the walk goes on. The order of
// the calls is the walk's, not the sorted order of the files returned.
// found is called for no file when a named path does not exist.
func CollectEach(paths []string, opts Options, found func(path string)) (files []string, skipped []Skipped, err error) {
	w := &walker{opts: opts, found: found, seen: map[string]bool{}, visited: map[dirID]bool{}}
	if w.opts.Include == nil {
		w.opts.Include = func(p string) bool { return strings.HasSuffix(p, ".json") }
	}
	var dirs, named []string
	for _, root := range paths {
		info, statErr := os.Stat(root)
		if statErr != nil {
			return nil, nil, fmt.Errorf("%s: %w", root, unwrapPathError(statErr))
		}
		if info.IsDir() {
			dirs = append(dirs, filepath.Clean(root))
		} else {
			named = append(named, root)
		}
	}
	for _, f := range named {
		w.add(f)
	}
	if !opts.FollowSymlinks {
		for _, r := range append(slices.Clone(paths), opts.Roots...) {
			if real, err := realPath(r); err == nil {
				w.roots = append(w.roots, real)
			}
		}
	}
	for _, d := range dirs {
		if root, err := os.OpenRoot(d); err != nil {
			w.skip(d, err)
		} else {
			w.walk(d, root)
		}
	}
	sort.Strings(w.files)
	sort.Slice(w.skipped, func(i, j int) bool { return w.skipped[i].Path < w.skipped[j].Path })
	return w.files, w.skipped, nil
}

// Skipped is a path inside a walked directory that is not read: it cannot
// be, or must not be.
type Skipped struct {
	Path string
	Err  error
}

type walker struct {
	opts    Options
	found   func(path string) // nil: no one waits for the files
	roots   []string          // where links may lead: absolute, links resolved
	seen    map[string]bool
	visited map[dirID]bool
	files   []string
	skipped []Skipped
}

func (w *walker) add(p string) {
	p = filepath.Clean(p)
	if !w.seen[p] {
		w.seen[p] = true
		w.files = append(w.files, p)
		if w.found != nil {
			w.found(p)
		}
	}
}

func (w *walker) skip(p string, err error) {
	w.skipped = append(w.skipped, Skipped{p, unwrapPathError(err)})
}

// walk walks the directory dir, open as root, and closes root. Its time is
// linear in the size of the tree: each directory is opened relative to its
// parent and known again by its identity (see dirID), so no system call
// resolves a path as deep as the tree (resolving them took time cubic in
// the depth).
func (w *walker) walk(dir string, root *os.Root) {
	defer root.Close()
	entries, id, err := list(root)
	if err != nil {
		w.skip(dir, err)
		return
	}
	if w.visited[id] {
		return // a symlink loop or a second link to a walked directory
	}
	w.visited[id] = true
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := join(dir, name)
		mode := e.Type()
		linked := mode&fs.ModeSymlink != 0
		if linked {
			info, err := w.follow(p)
			if err != nil {
				w.skip(p, err)
				continue
			}
			mode = info.Mode().Type()
		}
		switch {
		case mode.IsDir():
			var sub *os.Root
			if linked {
				sub, err = os.OpenRoot(p)
			} else {
				sub, err = root.OpenRoot(name)
			}
			if err != nil {
				w.skip(p, err)
				continue
			}
			w.walk(p, sub)
		case !w.opts.Include(p):
		case mode.IsRegular():
			w.add(p)
		default:
			w.skip(p, notRegular(mode))
		}
	}
}

// join is filepath.Join for a clean dir and a name read from it, without
// cleaning again a path as long as the tree is deep.
func join(dir, name string) string {
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir + name // the root of a file system
	}
	return dir + string(filepath.Separator) + name
}

// list returns the entries of the directory root and its identity.
func list(root *os.Root) ([]fs.DirEntry, dirID, error) {
	f, err := root.Open(".")
	if err != nil {
		return nil, dirID{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, dirID{}, err
	}
	id, err := identify(root.Name(), info)
	if err != nil {
		return nil, dirID{}, err
	}
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, id, err
}

// follow returns the Stat of the target of the link at p, or why the link
// is not followed.
func (w *walker) follow(p string) (fs.FileInfo, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("broken symbolic link: %w", unwrapPathError(err))
	}
	if w.opts.FollowSymlinks {
		return info, nil
	}
	real, err := realPath(p)
	if err != nil {
		return nil, err
	}
	for _, root := range w.roots {
		if inside(real, root) {
			return info, nil
		}
	}
	return nil, fmt.Errorf("symlink leaves the checked tree: %s is outside the paths checked; --follow-symlinks follows it", real)
}

// realPath returns p absolute, with every symbolic link resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// inside reports whether the clean absolute path p is root or below it.
func inside(p, root string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator) // "/" and "C:\\" end in one already
	}
	return strings.HasPrefix(p, root)
}

// Read reads a boundary document of at most MaxFileSize bytes.
func Read(path string) ([]byte, error) { return ReadLimited(path, MaxFileSize, "a boundary document") }

// AppendRead is Read appending to dst, so that a reader of many files can
// reuse one buffer; on error dst is returned unchanged.
func AppendRead(dst []byte, path string) ([]byte, error) {
	return appendLimited(dst, path, MaxFileSize, "a boundary document")
}

// ReadLimited reads a file of at most limit bytes; what names the kind of
// file in the error. Like os.ReadFile it sizes the buffer from the file's
// size, so a file costs one allocation; the limit is enforced on what is
// read, not on what Stat claims. Only regular files are read (see
// notRegular).
func ReadLimited(path string, limit int, what string) ([]byte, error) {
	return appendLimited(nil, path, limit, what)
}

// appendLimited is ReadLimited appending to dst.
func appendLimited(dst []byte, path string, limit int, what string) ([]byte, error) {
	// The open file is asked what it is: one system call, where a Stat
	// before opening looked the path up again.
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		if info, statErr := os.Stat(path); statErr == nil && !info.Mode().IsRegular() && !info.IsDir() {
			return dst, notRegular(info.Mode()) // a socket, which cannot be opened
		}
		return dst, unwrapPathError(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return dst, unwrapPathError(err)
	}
	switch mode := info.Mode(); {
	case mode.IsDir():
		return dst, errors.New("is a directory")
	case !mode.IsRegular():
		return dst, notRegular(mode) // not read: a device never ends
	}
	size := int(min(info.Size(), int64(limit))) + 1 // +1 to see EOF or excess
	data := slices.Grow(dst, size)
	base := len(dst)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if len(data)-base > limit {
			return dst, &TooLargeError{Limit: limit, What: what}
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return dst, unwrapPathError(err)
		}
		if len(data) == cap(data) {
			data = slices.Grow(data, len(data)-base) // the file grew after Stat
		}
	}
}

// ReadAll reads r to its end, at most MaxFileSize bytes: for a document
// given on standard input.
func ReadAll(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, &TooLargeError{Limit: MaxFileSize, What: "a boundary document"}
	}
	return data, nil
}

// TooLargeError says a file is over a size limit. It is a finding about
// the file (IDL001), not a failure of the run, whether the file was named,
// walked or given on standard input.
type TooLargeError struct {
	Limit int    // bytes
	What  string // the kind of file, "a boundary document"
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("file is larger than the %d MiB limit for %s", e.Limit>>20, e.What)
}

// notRegular says why a file of mode is not read: opening a named pipe
// would block until someone writes to it, and a device such as /dev/zero
// never ends.
func notRegular(mode fs.FileMode) error {
	kind := "mode " + mode.Type().String()
	switch {
	case mode&fs.ModeNamedPipe != 0:
		kind = "a named pipe"
	case mode&fs.ModeSocket != 0:
		kind = "a socket"
	case mode&fs.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("not a regular file (%s)", kind)
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
