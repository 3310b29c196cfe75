package reference

import (
	"fmt"
	"strings"

	"github.com/idemlint/idemlint/schemas/boundary"
)

// FindPolicy returns the path of the one owner policy among docs (a
// decoded boundary set) that declares operation, or of the only policy
// when operation is "". It is how a set directory names the policy to run
// or probe.
func FindPolicy(docs []*boundary.Document, operation string) (string, error) {
	var found []string
	for _, d := range docs {
		if d.Policy == nil {
			continue
		}
		for _, op := range d.Policy.Operations.Items {
			if operation == "" || op.Key.Value == operation {
				found = append(found, d.Path)
				break
			}
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return "", fmt.Errorf("it holds %d adapter policies (%s): name one with --policy FILE or --operation", len(found), strings.Join(found, ", "))
	case operation != "":
		return "", fmt.Errorf("it holds no adapter policy declaring operation %s", operation)
	}
	return "", fmt.Errorf("it holds no adapter policy")
}
