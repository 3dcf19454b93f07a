package mock

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testClock starts a private clock, stopped at the end of the test.
func testClock(t testing.TB) *clock {
	t.Helper()
	c := startClock()
	t.Cleanup(c.stop)
	return c
}

func TestClockHeap(t *testing.T) {
	c := &clock{}
	rng := rand.New(rand.NewPCG(1, 2))
	var want []int64
	for range 500 {
		at := rng.Int64N(1000)
		want = append(want, at)
		c.push(alarm{at: at})
	}
	slices.Sort(want)
	var got []int64
	for len(c.alarms) > 0 {
		got = append(got, c.pop().at)
	}
	assert.Equal(t, want, got)
}

// Waiters are never released before their deadline,
// however they were queued.
func TestClockNeverEarly(t *testing.T) {
	c := testClock(t)
	assert.NotEmpty(t, c.mode)
	base := time.Now().Add(20 * time.Millisecond)
	const n = 40
	type release struct {
		i        int
		deadline time.Time
		woke     time.Time
	}
	out := make(chan release, n)
	for _, i := range rand.New(rand.NewPCG(3, 4)).Perm(n) {
		deadline := base.Add(time.Duration(i) * 500 * time.Microsecond)
		go func() {
			tick := make(chan struct{}, 1)
			ok := c.wait(context.Background(), deadline, tick)
			assert.True(t, ok)
			out <- release{i, deadline, time.Now()}
		}()
	}
	for range n {
		r := <-out
		assert.False(t, r.woke.Before(r.deadline), "waiter %d woke %v early", r.i, r.deadline.Sub(r.woke))
	}
}

// A deadline earlier than the one the clock sleeps towards cuts its sleep
// short, and a waiter can wait again on the same tick.
func TestClockEarlierDeadlineWakes(t *testing.T) {
	c := testClock(t)
	ctx, cancel := context.WithCancel(context.Background())
	far := make(chan bool, 1)
	go func() { far <- c.wait(ctx, time.Now().Add(time.Hour), make(chan struct{}, 1)) }()
	require.Eventually(t, func() bool { return c.target.Load() != noDeadline }, 10*time.Second, time.Millisecond)
	tick := make(chan struct{}, 1)
	for k := range 3 {
		deadline := time.Now().Add(time.Duration(k+1) * time.Millisecond)
		require.True(t, c.wait(context.Background(), deadline, tick))
		assert.False(t, time.Now().Before(deadline))
	}
	cancel()
	assert.False(t, <-far, "a cancelled wait reports false")
	// The far alarm stays queued (harmlessly) until it is due.
	c.mu.Lock()
	assert.Len(t, c.alarms, 1)
	c.mu.Unlock()
}

func TestClockPastDeadline(t *testing.T) {
	c := testClock(t)
	assert.True(t, c.wait(context.Background(), time.Now().Add(-time.Second), nil), "no tick needed for a deadline already passed")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, c.wait(ctx, time.Now().Add(-time.Second), nil))
}
