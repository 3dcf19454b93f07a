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

// ReadFileMax reads the regular file at path whole if it holds at most
// limit bytes; a larger file is refused with a *TooLargeError, without
// reading more than limit+1 bytes of it (a sparse file of terabytes costs
// nothing).
func ReadFileMax(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1)) // bounded should it grow meanwhile
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return b, nil
}

// TooLargeError is ReadFileMax's refusal of a file over its limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	if e.Limit%(1<<20) == 0 {
		return fmt.Sprintf("%s is larger than %d MiB", e.Path, e.Limit>>20)
	}
	return fmt.Sprintf("%s is larger than %d bytes", e.Path, e.Limit)
}

// NotRegularError is what Open returns, in an *fs.PathError, for a path
// that is not a regular file.
type NotRegularError struct{ Mode fs.FileMode }

func (e NotRegularError) Error() string {
	return fmt.Sprintf("is %s, not a regular file: give the path of a file", e.Kind())
}

// Kind says what the path is: "a directory", "a named pipe (FIFO)", "a
// socket", "a device", else "not a regular file".
func (e NotRegularError) Kind() string {
	switch m := e.Mode; {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}
