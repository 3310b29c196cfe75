// Command idemlint checks that boundary JSON files keep the idempotency key
// alive end to end and declare a sound policy, and that a running service
// honours it.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// Exit codes.
const (
	exitOK       = 0 // no error findings
	exitFindings = 1 // error findings, or failed probes
	exitUsage    = 2 // usage or I/O error
)

// exitCode carries a command's exit status out through cobra, which only
// knows errors.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// run executes the command line and returns the process exit status.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	var code exitCode
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &code):
		return int(code)
	default:
		fmt.Fprintf(stderr, "idemlint: %v\n", err)
		return exitUsage
	}
}
