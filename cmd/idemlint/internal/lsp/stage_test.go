package lsp

// The server's checks run with the JSON Schema half of IDL002, as in
// idemlint, which installs it (checks/schemastage).
import _ "github.com/idemlint/idemlint/checks/schemastage"
