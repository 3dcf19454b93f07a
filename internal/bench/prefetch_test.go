package bench

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/dataset"
)

// The prefetcher holds at most prefetchBytes of prepared text (one session
// whatever its size): past it, it waits until the engine takes a session,
// or the source stops.
func TestPrefetchHoldsABudgetOfText(t *testing.T) {
	defer func(b int) { prefetchBytes = b }(prefetchBytes)
	prefetchBytes = 1000
	sessionOf := func(n int) *session {
		sess := &session{c: dataset.Conversation{Turns: []dataset.Turn{{Text: strings.Repeat("x", n)}}}}
		sess.bytes = sess.size()
		return sess
	}
	s := &source{ahead: make(chan *session, prefetchAhead), stop: make(chan struct{})}
	s.room = newRoom(s)
	require.True(t, s.hold(1500), "one session is held whatever its size")
	s.ahead <- sessionOf(1500)
	done := make(chan bool)
	go func() { done <- s.hold(200) }()
	for waits := false; !waits; runtime.Gosched() { // until it waits, or returns
		select {
		case <-done:
			t.Fatal("held 1,700 bytes of a 1,000-byte budget")
		default:
		}
		s.heldMu.Lock()
		waits = s.waiting
		s.heldMu.Unlock()
	}
	assert.Equal(t, 1500, s.prefetched().bytes)
	assert.True(t, <-done, "the engine took the session: the next one is held")

	go func() { done <- s.hold(900) }()
	s.Stop()
	assert.False(t, <-done, "Stop ends a wait")
}
