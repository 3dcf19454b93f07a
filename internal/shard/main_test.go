package shard_test

import (
	"os"
	"testing"

	"github.com/aiperf-go/aiperf/internal/shard/fakeworker"
)

// TestMain runs the test binary as a fake worker when asked to (the
// coordinator tests start it so: a real process, really signalled).
func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeworker.Env); mode != "" {
		os.Exit(fakeworker.Main(mode))
	}
	os.Exit(m.Run())
}
