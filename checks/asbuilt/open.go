package asbuilt

import (
	"fmt"
	"io"

	checkreport "github.com/idemlint/idemlint/checks/report"
)

// Open reads the as-built configuration src names (config.AsBuilt merges
// check's --as-built and --mesh over .idemlint.json's "as_built"). The
// files of walked directories that cannot be read, and how many resources
// were read, are said on w.
func Open(src Source, w io.Writer) (*Deployment, error) {
	d, skipped, err := Load(src)
	if err != nil {
		return nil, fmt.Errorf("as-built configuration: %w", err)
	}
	for _, s := range skipped {
		fmt.Fprintf(w, "idemlint: as-built configuration: %s not read: %v\n", s.Path, s.Err)
	}
	if len(src.Paths) > 0 {
		read, notRead := d.Set.Counts()
		fmt.Fprintf(w, "idemlint: %s read, %d skipped\n", checkreport.Plural(read, "as-built resource"), notRead)
	}
	return d, nil
}

// SayUnread says on w which files of d could not be read and how many
// values were read without being understood, for a command that shows no
// findings ("idemlint graph"): check reports each as IDL001.
func (d *Deployment) SayUnread(w io.Writer) {
	for _, e := range d.Set.Errors {
		fmt.Fprintf(w, "idemlint: cannot read the as-built file %v; hops it routes are drawn without it\n", e)
	}
	if n := len(d.Set.FileFindings()) - len(d.Set.Errors); n > 0 {
		fmt.Fprintf(w, "idemlint: %s of the as-built files not understood and drawn without (idemlint check says where)\n", checkreport.Plural(n, "value"))
	}
}
