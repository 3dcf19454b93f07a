package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAfterInterrupt: the context of an integration's last export outlives
// its run's context, by the grace once the run is interrupted (before the
// export or during it), and not at all otherwise.
func TestAfterInterrupt(t *testing.T) {
	run, interrupt := context.WithCancel(context.Background())
	c, done := afterInterrupt(run, 10*time.Millisecond)
	defer done()
	select {
	case <-c.Done():
		t.Fatal("ended while the run was not interrupted")
	case <-time.After(50 * time.Millisecond):
	}
	interrupt() // during the export
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("not ended after the run was interrupted")
	}

	c2, done2 := afterInterrupt(run, time.Hour) // interrupted before: the grace still holds
	require.NoError(t, c2.Err())
	done2()
	assert.Error(t, c2.Err(), "ended when the export is done")
}
