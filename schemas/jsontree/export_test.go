package jsontree

// The fuzz target and the benchmarks live outside the package to seed
// themselves from the fixtures (which import the checks): these are what
// they need from inside.
var (
	// ParseWithLimit exercises the value limit on small inputs.
	ParseWithLimit = parse
	SmallValues    = smallValues
)
