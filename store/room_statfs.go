//go:build linux || darwin || freebsd

package store

import "syscall"

// noRoom (a variable for tests) reports whether the filesystem of dir has
// less than minRoom free for this user (false when it cannot tell).
var noRoom = func(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	return uint64(st.Bavail)*uint64(st.Bsize) < minRoom
}
