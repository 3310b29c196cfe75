package checks

import (
	"github.com/idemlint/idemlint/checks/chain"
	"testing"

	"github.com/idemlint/idemlint/fixtures"
	"github.com/idemlint/idemlint/schemas/jsontree"
)

// FuzzCheckDocument runs every per-document rule on arbitrary input: no
// input may panic, and every finding must name a registered rule and, when
// the file parsed far enough to have one, a real position.
func FuzzCheckDocument(f *testing.F) {
	seeds, err := fixtures.Documents()
	if err != nil {
		f.Fatal(err)
	}
	for _, data := range seeds {
		f.Add(data)
	}
	opts := DefaultOptions()
	opts.Schema = validator
	f.Fuzz(func(t *testing.T, src []byte) {
		doc, findings := checkDocument("fuzz.json", src, new(jsontree.Parser), newRun(&opts))
		for _, fd := range findings {
			if _, ok := Core.Lookup(fd.Rule); !ok {
				t.Fatalf("finding names unknown rule: %+v", fd)
			}
			if fd.Line < 1 || fd.Column < 1 || fd.Message == "" {
				t.Fatalf("finding without position or message: %+v", fd)
			}
		}
		if doc != nil {
			CheckSet([]*chain.Facts{chain.FactsOf(doc)}, &opts)
		}
	})
}
