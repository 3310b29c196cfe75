package main

import (
	"embed"
	"strings"
)

// The commands' long help is prose, kept apart from the code in
// help/COMMAND.txt (a subcommand's file joins its path with "-"), each
// file ending in one newline.
//
//go:embed help/*.txt
var helpTexts embed.FS

// longHelp is the long help of the command name.
func longHelp(name string) string {
	text, err := helpTexts.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err) // a command without its file: TestHelpOutput shows it
	}
	return strings.TrimSuffix(string(text), "\n")
}
