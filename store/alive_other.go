//go:build !unix

package store

// processAlive cannot tell on this platform, so a claim is never taken
// over: its owner is assumed to be running.
func processAlive(int, string) bool { return true }

// processStart cannot be read on this platform: claims carry no instance.
func processStart(int) string { return "" }

// selfStart is this process's processStart.
func selfStart() string { return "" }
