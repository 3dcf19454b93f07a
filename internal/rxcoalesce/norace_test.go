//go:build !race

package rxcoalesce

const raceEnabled = false
