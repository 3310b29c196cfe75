//go:build unix

package fileset

import (
	"path/filepath"
	"syscall"
	"testing"
)

// A named pipe would block Read forever and a device would never end:
// both are refused before they are opened.
func TestReadRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for path, want := range map[string]string{
		fifo:        "not a regular file (a named pipe)",
		"/dev/zero": "not a regular file (a device)",
	} {
		if _, err := Read(path); err == nil || err.Error() != want {
			t.Errorf("Read(%s): err = %v, want %q", path, err, want)
		}
	}
}
