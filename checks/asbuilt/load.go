package asbuilt

import (
	"fmt"

	"github.com/idemlint/idemlint/schemas/fileset"
)

// Source says where a run's as-built configuration is (docs/as-built.md,
// Reading the configuration): the
// flags of "check", or the "as_built" section of .idemlint.json, which
// check, graph and the language server read alike.
type Source struct {
	// Paths are files, and directories walked for IsFile.
	Paths []string
	Mesh  Mesh
	// MeshAt is where the mesh is declared: the "mesh" value of
	// .idemlint.json. Zero when --mesh named it (or nothing did): a mesh
	// default is then reported at the edge document it applies to.
	MeshAt Pos
	// Classes are the implementations of Gateway classes by name
	// (.idemlint.json as_built.classes).
	Classes        map[string]ImplementationName
	FollowSymlinks bool
	// ListSkipped says, once the files are read, how many documents of
	// each kind were skipped (--verbose).
	ListSkipped bool
}

// ParseMesh returns the mesh named s, or an error naming the meshes.
func ParseMesh(s string) (Mesh, error) {
	switch m := Mesh(s); m {
	case NoMesh, IstioMesh:
		return m, nil
	}
	return "", fmt.Errorf("the mesh must be %s or %s, got %q", NoMesh, IstioMesh, s)
}

// Load reads the configuration src names. Skipped are the files of
// walked directories that could not be read; a file that cannot be
// parsed is in the Set's Errors instead (IDL001, Set.FileFindings).
func Load(src Source) (*Deployment, []fileset.Skipped, error) {
	files, skipped, err := collect(src)
	if err != nil {
		return nil, nil, err
	}
	return &Deployment{Set: src.read(files), Mesh: src.Mesh, MeshAt: src.MeshAt, Classes: src.Classes}, skipped, nil
}

// read reads files, collected from src, an NGINX include reaching only
// into the paths src names.
func (src Source) read(files []string) *Set {
	return readFiles(files, func() includeTree { return treeOf(src.Paths, src.FollowSymlinks) })
}

// collect returns the files src names, walking its directories.
func collect(src Source) ([]string, []fileset.Skipped, error) {
	if len(src.Paths) == 0 {
		return nil, nil, nil
	}
	return fileset.Collect(src.Paths, fileset.Options{Include: IsFile, FollowSymlinks: src.FollowSymlinks})
}

// meshAt is where a finding caused by the mesh's default at an edge
// document is reported: where the mesh is declared, else the document.
func (d *Deployment) meshAt(docPath string) Pos {
	if d.MeshAt.File != "" {
		return d.MeshAt
	}
	return Pos{File: docPath, Line: 1, Column: 1}
}
