package checks

// IDL003 is reported by the runner while it applies the suppressions of a
// document (suppress.go): the entries are only meaningful once every other
// rule has reported, so no rule function of its own could check them.
var idl003 = &Rule{
	ID:       "IDL003",
	Name:     "suppression",
	Severity: Error,
	Summary:  "x-idemlint-ignore entries name a known rule and a reason, and each one hides a finding",
	Doc: `A document can hide the findings of a rule with a document-level list:
  "x-idemlint-ignore": [
    {"rule": "IDL112", "reason": "the gateway logs the key; see OPS-123"}
  ]
An entry hides every finding of its rule located in that file, including
cross-document findings reported there. A suppression is a decision that
reviewers must be able to question later, so the reason is mandatory; and
an entry that hides nothing is reported, so stale entries do not pile up
and quietly hide the next real problem.

Reported: an "x-idemlint-ignore" that is not an array of objects, an entry
without "rule", an unknown rule id, a missing or empty "reason", an unknown
field in an entry, a rule suppressed twice in one document, a suppression
of IDL001 or IDL003 (which no document can waive), and, as a warning, an
entry that hides no finding. An entry with an error hides nothing. An
entry for a rule the project configuration turns off is not reported as
unused: the rule did not run, so nobody knows.

Fix: correct the entry as the message says, or delete it when it is
unused. To turn a rule off for the whole project rather than one file, set
it to "off" under "rules" in .idemlint.json.`,
}
