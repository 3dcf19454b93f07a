//go:build !race

package endpoint

// raceEnabled reports a build with the race detector.
const raceEnabled = false
