package report

import "github.com/idemlint/idemlint/schemas/fileset"

// SourceOf gives the text format (Options.Source) the files it shows
// lines of: the document on standard input when *stdin holds it, else
// the file on disk. Findings come sorted by file, so it keeps the last
// file read.
func SourceOf(stdin *[]byte) func(path string) (string, bool) {
	var lastPath, lastText string
	var lastOK bool
	return func(path string) (string, bool) {
		if *stdin != nil {
			return string(*stdin), true
		}
		if path != lastPath {
			src, err := fileset.Read(path)
			lastPath, lastText, lastOK = path, string(src), err == nil
		}
		return lastText, lastOK
	}
}
