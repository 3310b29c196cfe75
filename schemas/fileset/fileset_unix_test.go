//go:build unix

package fileset

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A named pipe would block Read forever and a device would never end:
// both are refused before they are read (the pipe is opened without
// waiting for a writer), and a socket, which cannot be opened, is named.
func TestReadRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sock := filepath.Join(filepath.Dir(fifo), "s.json")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("listen on a Unix socket: %v", err)
	}
	defer l.Close()
	for path, want := range map[string]string{
		fifo:        "not a regular file (a named pipe)",
		"/dev/zero": "not a regular file (a device)",
		sock:        "not a regular file (a socket)",
	} {
		if _, err := Read(path); err == nil || err.Error() != want {
			t.Errorf("Read(%s): err = %v, want %q", path, err, want)
		}
	}
}

// Inside a directory, a special file that would be checked is reported,
// not skipped silently; one that would not is left alone.
func TestCollectReportsSpecialFiles(t *testing.T) {
	root := tree(t, "a.json")
	for _, name := range []string{"pipe.json", "pipe.txt"} {
		if err := syscall.Mkfifo(filepath.Join(root, name), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	if _, err := os.Stat("/dev/null"); err != nil {
		t.Skipf("no /dev/null: %v", err)
	}
	mustSymlink(t, "/dev/null", filepath.Join(root, "null.json"))
	files, skipped, err := Collect([]string{root}, Options{FollowSymlinks: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.json"}, rel(t, root, files)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	want := []string{"null.json: not a regular file (a device)", "pipe.json: not a regular file (a named pipe)"}
	if diff := cmp.Diff(want, describe(t, root, skipped)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}
