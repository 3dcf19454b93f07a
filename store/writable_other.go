//go:build !unix

package store

// accessKnown: writable cannot tell here, so a store is never read as an
// immutable snapshot on its word.
const accessKnown = false

// writable is false where access(2) is not at hand: the store is opened
// mode=ro, as before.
func writable(string) bool { return false }

// writableFile is true where access(2) is not at hand: a side file is not
// blamed.
func writableFile(string) bool { return true }
