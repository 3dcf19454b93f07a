//go:build !unix

package store

// writable is false where access(2) is not at hand: the store is opened
// mode=ro, as before.
func writable(string) bool { return false }
