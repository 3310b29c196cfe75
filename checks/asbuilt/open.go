package asbuilt

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	checkreport "github.com/idemlint/idemlint/checks/report"
)

// Open starts reading the as-built configuration src names
// (config.AsBuilt merges check's --as-built and --mesh over
// .idemlint.json's "as_built") and returns it while the files are read,
// so that a run reads them beside its boundary documents: a run it is
// supplied to waits for them (Findings), as Wait does. The files of walked directories
// that cannot be read are said on w at once, and how many resources were
// read once they are.
func Open(src Source, w io.Writer) (*Deployment, error) {
	if len(src.Paths) == 0 {
		d, _, err := Load(src)
		return d, err
	}
	files, skipped, err := collect(src)
	if err != nil {
		return nil, fmt.Errorf("as-built configuration: %w", err)
	}
	for _, s := range skipped {
		fmt.Fprintf(w, "idemlint: as-built configuration: %s not read: %v\n", s.Path, s.Err)
	}
	d := &Deployment{Mesh: src.Mesh, MeshAt: src.MeshAt, Classes: src.Classes}
	read := make(chan *Set, 1)
	go func() { read <- src.read(files) }()
	d.wait = sync.OnceFunc(func() {
		d.Set = <-read
		n, notRead := d.Set.Counts()
		fmt.Fprintf(w, "idemlint: %s read, %d skipped\n", checkreport.Plural(n, "as-built resource"), notRead)
		if src.ListSkipped && notRead > 0 {
			fmt.Fprintf(w, "idemlint: as-built documents skipped, by kind: %s\n", d.Set.skippedByKind())
		}
	})
	return d, nil
}

// skippedByKind words Set.SkippedKinds: "Deployment 12, Service 12,
// ConfigMap 2, no kind 1", the most skipped first.
func (s *Set) skippedByKind() string {
	kinds := slices.Collect(maps.Keys(s.SkippedKinds))
	slices.SortFunc(kinds, func(a, b string) int {
		return cmp.Or(cmp.Compare(s.SkippedKinds[b], s.SkippedKinds[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", cmp.Or(k, "no kind"), s.SkippedKinds[k])
	}
	return strings.Join(parts, ", ")
}

// Wait waits until the files Open started reading are read: d.Set is
// then what they hold, its routes implemented as d's mesh and classes
// say.
func (d *Deployment) Wait() {
	if d.wait != nil {
		d.wait()
	}
	d.implemented.Do(func() {
		if d.Mesh != NoMesh || len(d.Classes) > 0 {
			d.Set.Implement(Platforms{Mesh: d.Mesh, Classes: d.Classes})
		}
	})
}

// SayUnread says on w which files of d could not be read and how many
// values were read without being understood, for a command that shows no
// findings ("idemlint graph"): check reports each as IDL001.
func (d *Deployment) SayUnread(w io.Writer) {
	d.Wait()
	for _, e := range d.Set.Errors {
		fmt.Fprintf(w, "idemlint: cannot read the as-built file %v; hops it routes are drawn without it\n", e)
	}
	if n := len(d.Set.FileFindings()) - len(d.Set.Errors); n > 0 {
		fmt.Fprintf(w, "idemlint: %s of the as-built files not understood and drawn without (idemlint check says where)\n", checkreport.Plural(n, "value"))
	}
}
