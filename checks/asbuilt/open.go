package asbuilt

import (
	"fmt"
	"io"

	checkreport "github.com/idemlint/idemlint/checks/report"
	"github.com/idemlint/idemlint/schemas/fileset"
)

// Open reads the as-built configuration of a run (check --as-built PATH,
// --mesh MESH): nil when there are no paths and meshGiven is false. The
// paths that cannot be collected, and how many resources were read, are
// said on w.
func Open(paths []string, mesh string, meshGiven, followSymlinks bool, w io.Writer) (*Deployment, error) {
	m := Mesh(mesh)
	if m != NoMesh && m != IstioMesh {
		return nil, fmt.Errorf("--mesh must be none or istio, got %q", mesh)
	}
	if len(paths) == 0 {
		if meshGiven {
			return &Deployment{Set: Read(nil), Mesh: m}, nil
		}
		return nil, nil
	}
	files, skipped, err := fileset.Collect(paths, fileset.Options{Include: IsFile, FollowSymlinks: followSymlinks})
	if err != nil {
		return nil, fmt.Errorf("--as-built: %w", err)
	}
	for _, s := range skipped {
		fmt.Fprintf(w, "idemlint: --as-built: %s not read: %v\n", s.Path, s.Err)
	}
	set := Read(files)
	read, notRead := set.Counts()
	fmt.Fprintf(w, "idemlint: %s read, %d skipped\n", checkreport.Plural(read, "as-built resource"), notRead)
	return &Deployment{Set: set, Mesh: m}, nil
}
