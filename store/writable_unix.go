//go:build unix

package store

import (
	"path/filepath"
	"syscall"
)

// accessKnown: writable can tell (access(2)).
const accessKnown = true

// writable reports whether the process may write path and its directory
// (where SQLite keeps the -wal and -shm files).
func writable(path string) bool {
	return writableFile(path) && writableFile(filepath.Dir(path))
}

// writableFile reports whether the process may write the file path.
func writableFile(path string) bool {
	const wOK = 2 // W_OK
	return syscall.Access(path, wOK) == nil
}
