package reference

import (
	"fmt"
	"strings"

	"github.com/idemlint/idemlint/checks"
	"github.com/idemlint/idemlint/schemas/boundary"
)

// CheckPolicy reads the policy document src (read from path, which names
// it in findings) through every per-document check of a run of opts, as
// "idemlint check" does (checks.DefaultOptions: the core rules), and
// returns it with its findings, sorted. It is the one place a policy is
// accepted or refused, for the engine (serve, conform --reference) and for
// conform against a live target.
//
// Strict, as the engine is, any error finding refuses the document with an
// *InvalidPolicyError. Otherwise the findings are the caller's notes and
// only a document that cannot be read as a policy is refused: one that is
// not a JSON object, or holds no adapter policy (an adapter document, or a
// gateway_to_adapter document with an embedded adapter policy).
func CheckPolicy(path string, src []byte, strict bool, opts checks.Options) (*boundary.Document, []checks.Finding, error) {
	doc, findings := checks.CheckDocumentWith(path, src, opts)
	checks.SortFindings(findings)
	if errs, _ := checks.Count(findings); strict && errs > 0 {
		return nil, findings, &InvalidPolicyError{Path: path, Findings: findings}
	}
	switch {
	case doc == nil:
		return nil, findings, fmt.Errorf("%s is not a JSON object%s", path, findingLines(findings))
	case doc.Policy == nil:
		return nil, findings, fmt.Errorf(`%s is not an adapter policy: its boundary is %q; want "adapter", or "gateway_to_adapter" with an embedded "adapter" object`, path, doc.Kind)
	}
	return doc, findings, nil
}

// InvalidPolicyError refuses a policy. Findings are those of the checks
// (every per-document rule, as "idemlint check" runs them) or, for a
// policy that passes them, what the engine still cannot run; warnings are
// included for context. The verdict is the same in every program; how a
// schema violation is worded is not: the engine links no JSON Schema
// library, so IDL002 names the value that departs from the schema, and a
// program that gives the checks a schema stage (WithChecks, as idemlint
// does) gets the validator's words.
type InvalidPolicyError struct {
	Path     string
	Findings []checks.Finding // sorted
}

func (e *InvalidPolicyError) Error() string {
	errs, _ := checks.Count(e.Findings)
	plural := "s"
	if errs == 1 {
		plural = ""
	}
	return fmt.Sprintf("%s is not a usable adapter policy (%d error%s)%s", e.Path, errs, plural, findingLines(e.Findings))
}

// findingLines lists findings as "idemlint check" writes them, each after
// a line break.
func findingLines(findings []checks.Finding) string {
	var b strings.Builder
	for _, f := range findings {
		b.WriteString("\n" + f.String())
	}
	return b.String()
}
