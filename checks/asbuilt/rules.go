package asbuilt

import "github.com/idemlint/idemlint/checks"

// Rules are the as-built rules, in id order: a run applies them when its
// caller lists them among its rules (checks.Options.Rules) and supplies
// the as-built configuration (Config). A rule is a file (idlNNN.go) and a
// line here.
var Rules = checks.Rules{idl401, idl402, idl403, idl404, idl405, idl406, idl407}
