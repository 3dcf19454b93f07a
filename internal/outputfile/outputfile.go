// Package outputfile writes a command's output files under one rule, as
// package inputfile opens its inputs: the trace and analysis commands'
// (synthesize-trace, analyze-trace --output-file, analyze swim-lane,
// analyze turn-messages, and profile's synthetic trace) and report -o.
//
// A path that does not exist is created; a regular file (or the regular
// file a symbolic link names) is replaced whole, a temporary file beside it
// renamed over it once written; a character device (/dev/null, /dev/stdout
// on a terminal) is written in place, never replaced. Anything else that
// exists is refused by its mode, before it is opened: a named pipe, whose
// open waits for a reader that may never come (no signal reaches a blocked
// open), a socket, a block device or a directory.
package outputfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/aiperf-go/aiperf/internal/inputfile"
)

// Check checks, without opening it, that path may be written as an
// output file, and reports whether it is a character device, written in
// place rather than replaced. The refusal names path and what it is.
func Check(path string) (inPlace bool, err error) {
	if _, err := os.Lstat(path); err != nil {
		return false, nil // nothing there (or the directory is at fault, which the write says)
	}
	st, err := os.Stat(path)
	switch {
	case err != nil: // a symbolic link to nothing, or a loop
		return false, fmt.Errorf("%s is a symbolic link that names no file (%v): give the path of a file", path, unwrapPath(err))
	case st.IsDir():
		return false, fmt.Errorf("%s is a directory: give a file path", path)
	case st.Mode().IsRegular():
		return false, nil
	case st.Mode()&fs.ModeCharDevice != 0:
		return true, nil
	}
	return false, fmt.Errorf("%s %w", path, inputfile.NotRegularError{Mode: st.Mode()})
}

// unwrapPath is a *fs.PathError's cause (the path is named already).
func unwrapPath(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// SameFile reports whether the paths a and b both exist and are the same
// file, whatever their names (a relative and an absolute path, a symbolic
// or a hard link).
func SameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// Write writes the output file path with write, as Check
// allows (its directory made): whole or not at all, a temporary file
// renamed over it once written, so that an error or an interruption
// leaves what was there; a character device is written in place. An
// error of write is returned as it is. It returns the bytes written.
func Write(path string, write func(io.Writer) error) (int64, error) {
	inPlace, err := Check(path)
	if err != nil {
		return 0, err
	}
	if inPlace {
		return writeInPlace(path, write)
	}
	target := path // a symbolic link keeps naming the file, replaced
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".*")
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name()) // after the rename, nothing
	n, err := writeTo(f, path, write)
	if err == nil {
		err = f.Chmod(0o644) // as os.Create makes it (a temporary file is 0600)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("write %s: %w", path, cerr)
	}
	if err != nil {
		return 0, err
	}
	// Checked again: what was put there meanwhile is not replaced unless
	// it is a regular file.
	switch inPlace, err := Check(target); {
	case err != nil:
		return 0, err
	case inPlace:
		return 0, fmt.Errorf("write %s: %s became a device while it was written: not replaced", path, target)
	}
	if err := os.Rename(f.Name(), target); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	return n, nil
}

// writeInPlace writes to the character device at path.
func writeInPlace(path string, write func(io.Writer) error) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	n, err := writeTo(f, path, write)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("write %s: %w", path, cerr)
	}
	return n, err
}

// writeTo runs write on f (the output path's file) through a buffer,
// returning the bytes that reached f.
func writeTo(f *os.File, path string, write func(io.Writer) error) (int64, error) {
	c := &counter{w: f, path: path}
	w := bufio.NewWriterSize(c, 1<<16)
	if err := write(w); err != nil {
		return c.n, err
	}
	if err := w.Flush(); err != nil {
		return c.n, err
	}
	return c.n, nil
}

// counter counts the bytes written through it; its errors name the
// output path (not the temporary file's).
type counter struct {
	w    io.Writer
	path string
	n    int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil {
		err = fmt.Errorf("write %s: %w", c.path, unwrapPath(err))
	}
	return n, err
}
