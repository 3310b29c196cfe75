package jsontree

// ParseWithLimit lets the fuzz target, which lives outside the package to
// seed itself from the fixtures, exercise the value limit on small inputs.
var ParseWithLimit = parse
