package openapi

import (
	"fmt"
	"io"
)

// Note is something the reader of a description, or init, left out or
// assumed: not a finding, but what a user must know to trust the result.
// Notes of one kind are told in one line with their count; --verbose
// lists each.
type Note struct {
	Kind *NoteKind
	// Instance names the element: an operation, a $ref and its place.
	Instance string
}

// NoteKind says what happened and what to do, the same for every note of
// the kind; Noun counts its instances ("operations").
type NoteKind struct{ Noun, Text string }

// The kinds of notes.
var (
	NoteIgnoredRef = &NoteKind{"$refs", "ignored, a $ref that does not resolve in a part idemlint does not read (request and response bodies, examples, unused components)"}
	NoteUnreadable = &NoteKind{"operations", "left out, an operation whose parameter, response or path item is a $ref that does not resolve: nothing is reported there"}
	NoteBodyKey    = &NoteKind{"operations", "IDL302 not reported, the description carries its idempotency key in the request body, not in a header (the starter set's key header stands for it)"}
	NoteNoKey      = &NoteKind{"descriptions", "no idempotency key header declared (no header parameter whose name or description says idempotency), so the starter set uses x-idempotency-key; name the API's header with --key-header"}
	NoteKeyGap     = &NoteKind{"operations", "openapi check will report IDL302 until the description declares the key header as a required header parameter (the browser edge requires the key, IDL101, so the description is what to fix)"}
)

// WriteNotes writes notes, one line per kind in the order kinds first
// appear: what happened, then the instance when there is one, else their
// count; every instance when verbose.
func WriteNotes(w io.Writer, notes []Note, verbose bool) {
	var kinds []*NoteKind
	byKind := map[*NoteKind][]string{}
	for _, n := range notes {
		if _, ok := byKind[n.Kind]; !ok {
			kinds = append(kinds, n.Kind)
		}
		byKind[n.Kind] = append(byKind[n.Kind], n.Instance)
	}
	for _, kind := range kinds {
		instances := byKind[kind]
		switch {
		case len(instances) == 1:
			fmt.Fprintf(w, "note: %s: %s\n", kind.Text, instances[0])
		case !verbose:
			fmt.Fprintf(w, "note: %s: %d %s (--verbose lists them)\n", kind.Text, len(instances), kind.Noun)
		default:
			fmt.Fprintf(w, "note: %s: %d %s:\n", kind.Text, len(instances), kind.Noun)
			for _, i := range instances {
				fmt.Fprintf(w, "note:   %s\n", i)
			}
		}
	}
}
