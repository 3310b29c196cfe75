package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Output is one destination of a report: a format and the file it goes to,
// "" for standard output.
type Output struct {
	Format string
	Path   string
	f      Formatter
}

// ParseOutputs reads "FORMAT" and "FORMAT=PATH" specifications, as given to
// --output: every format must exist, at most one goes to standard output,
// and no file is named twice. Nothing is written yet, so a bad
// specification leaves no file behind.
func ParseOutputs(specs []string, o Options) ([]Output, error) {
	var outs []Output
	paths := map[string]bool{}
	toStdout := 0
	for _, spec := range specs {
		name, path, hasPath := strings.Cut(spec, "=")
		if hasPath && path == "" {
			return nil, fmt.Errorf("--output %q: the file after \"=\" is empty (FORMAT=PATH, or FORMAT alone for standard output)", spec)
		}
		fo := o
		if hasPath {
			fo.Color = false // colour is for terminals
		}
		f, err := New(name, fo)
		if err != nil {
			return nil, fmt.Errorf("--output %q: %w", spec, err)
		}
		switch {
		case !hasPath:
			toStdout++
			if toStdout > 1 {
				return nil, errors.New("--output: only one format can go to standard output; give the others a file (FORMAT=PATH)")
			}
		case paths[path]:
			return nil, fmt.Errorf("--output: %s is named twice", path)
		}
		paths[path] = true
		outs = append(outs, Output{Format: name, Path: path, f: f})
	}
	return outs, nil
}

// WriteAll writes r to every output, in order, and returns the first error.
func WriteAll(outs []Output, stdout io.Writer, r *Report) error {
	for _, out := range outs {
		if out.Path == "" {
			if err := out.f.Format(stdout, r); err != nil {
				return err
			}
			continue
		}
		if err := writeFile(out, r); err != nil {
			return fmt.Errorf("--output %s=%s: %w", out.Format, out.Path, err)
		}
	}
	return nil
}

func writeFile(out Output, r *Report) error {
	file, err := os.Create(out.Path)
	if err != nil {
		return unwrapPath(err)
	}
	bw := bufio.NewWriter(file)
	if err := out.f.Format(bw, r); err != nil {
		file.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		file.Close()
		return unwrapPath(err)
	}
	return unwrapPath(file.Close())
}

// unwrapPath drops the path from a *os.PathError: the message names the
// output already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
