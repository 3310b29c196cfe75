package checks_test

// The JSON Schema half of IDL002 lives outside the core checks
// (checks/schemastage): these tests hold the rules to the whole of IDL002,
// as idemlint runs them.
import _ "github.com/idemlint/idemlint/checks/schemastage"
