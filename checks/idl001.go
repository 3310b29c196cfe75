package checks

// IDL001 is reported by the loader (package jsontree) rather than by a
// function of its own: no other rule can run on a file that is not JSON.
var IDL001 = &Rule{
	ID:       "IDL001",
	Name:     "strict-json",
	Severity: Error,
	Summary:  "the file is one valid UTF-8 JSON object with no duplicate keys",
	Doc: `A boundary document must be exactly one JSON object (RFC 8259) in UTF-8.
Different JSON parsers disagree on inputs outside that grammar: most keep the
last of two duplicate keys silently, some keep the first, some accept comments
or trailing commas. A policy that two tools read differently is no policy.

Reported: a byte order mark, comments, trailing commas, an empty file, content
after the top-level object, a top-level value that is not an object, invalid
UTF-8, lone surrogate escapes, duplicate keys at any depth (each one, at its
second occurrence, naming the first), a file that cannot be read or is not a
regular file (a named pipe, a device), and a file larger than 8 MiB.

Fix: make the file plain JSON. Keep notes in an "x-" extension field instead
of comments, and keep one of each duplicated key.`,
}
