//go:build !(linux || darwin || freebsd)

package store

// noRoom (a variable for tests) cannot tell here: false (a full disk is then found when SQLite
// fails to fill the -shm file, and the store read as immutable).
var noRoom = func(string) bool { return false }
