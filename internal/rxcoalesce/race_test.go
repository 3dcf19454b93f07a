//go:build race

package rxcoalesce

// raceEnabled: the race detector allocates on its own.
const raceEnabled = true
