// Package inputfile opens the files a user names as input (datasets,
// traces, configs, templates, media, tokenizers) so that what is not a
// regular file is refused at once: opening a FIFO for reading waits for a
// writer that may never come, and a device may never end a read, where no
// cancellation or signal reaches a blocked open.
package inputfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Open opens path for reading. A FIFO, a device, a socket or a directory
// is refused with an error naming the path and what it is; the open never
// waits for a FIFO's writer.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: NotRegularError{st.Mode()}}
	}
	return f, nil
}

// ReadFile reads the regular file at path whole, as os.ReadFile.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// NotRegularError is what Open returns, in an *fs.PathError, for a path
// that is not a regular file.
type NotRegularError struct{ Mode fs.FileMode }

func (e NotRegularError) Error() string {
	what := "not a regular file"
	switch m := e.Mode; {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Sprintf("is %s, not a regular file: give the path of a file", what)
}
