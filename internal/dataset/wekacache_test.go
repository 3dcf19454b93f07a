package dataset

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWekaCacheParsesOnceKeepsWithinBudget: readers of one file at once
// share a single parse; the least recently used files go once over the
// budget (the latest stays, however large); a failed parse is not kept.
func TestWekaCacheParsesOnceKeepsWithinBudget(t *testing.T) {
	c := newWekaCache(100)
	var loads [4]atomic.Int32
	loader := func(file, size int) func() (*parsedWeka, error) {
		return func() (*parsedWeka, error) {
			loads[file].Add(1)
			return &parsedWeka{size: size}, nil
		}
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			tr, err := c.get(0, loader(0, 40))
			assert.NoError(t, err)
			assert.Equal(t, 40, tr.size)
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, loads[0].Load(), "one parse for 16 readers")

	_, _ = c.get(1, loader(1, 40))
	_, _ = c.get(0, loader(0, 40)) // 0 is now the most recent
	_, _ = c.get(2, loader(2, 40)) // 120 > 100: 1, the least recent, goes
	_, _ = c.get(0, loader(0, 40))
	_, _ = c.get(1, loader(1, 40))
	assert.EqualValues(t, []int32{1, 2, 1}, []int32{loads[0].Load(), loads[1].Load(), loads[2].Load()})
	assert.LessOrEqual(t, c.used, 100)

	_, _ = c.get(3, loader(3, 500)) // over the budget alone: kept, the rest dropped
	_, _ = c.get(3, loader(3, 500))
	assert.EqualValues(t, 1, loads[3].Load())
	assert.Equal(t, 500, c.used)

	boom := errors.New("boom")
	failing := 0
	fail := func() (*parsedWeka, error) { failing++; return nil, boom }
	_, err := c.get(2, fail)
	require.ErrorIs(t, err, boom)
	_, err = c.get(2, fail)
	require.ErrorIs(t, err, boom)
	assert.Equal(t, 2, failing, "an error is not kept: the next reader tries again")
}

// TestWekaCacheLoadPanics: a load that panics passes the panic on and
// leaves nothing behind for the next reader to wait on.
func TestWekaCacheLoadPanics(t *testing.T) {
	c := newWekaCache(100)
	assert.Panics(t, func() { _, _ = c.get(0, func() (*parsedWeka, error) { panic("boom") }) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr, err := c.get(0, func() (*parsedWeka, error) { return &parsedWeka{size: 1}, nil })
		assert.NoError(t, err)
		assert.Equal(t, 1, tr.size)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the next reader waits on the panicked load")
	}
}
