package chain

// The set builders of the internal tests, for the external tests that
// draw graphs with package report (which imports chain).
var (
	TestSet     = set
	TestHop     = hop
	TestAdapter = adapter
)
