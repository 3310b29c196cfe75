package fileset

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkCollectDepth walks one chain of nested directories with a file
// at the bottom: the walk must cost time linear in the depth.
func BenchmarkCollectDepth(b *testing.B) {
	for _, depth := range []int{150, 300, 600, 1200} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			root := b.TempDir()
			deepest := filepath.Join(root, strings.Repeat("d"+string(filepath.Separator), depth))
			if err := os.MkdirAll(deepest, 0o755); err != nil {
				b.Skipf("cannot nest %d directories here: %v", depth, err)
			}
			if err := os.WriteFile(filepath.Join(deepest, "a.json"), []byte("{}"), 0o644); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if files, skipped, err := Collect([]string{root}, Options{}); err != nil || len(skipped) > 0 || len(files) != 1 {
					b.Fatal(files, skipped, err)
				}
			}
		})
	}
}
