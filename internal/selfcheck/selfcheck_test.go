package selfcheck

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A window over busy goroutines sees the process's CPU and the scheduler's
// latency; the quantiles read the histogram's buckets.
func TestWindow(t *testing.T) {
	a := Take()
	var (
		wg   sync.WaitGroup
		done atomic.Bool
	)
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for !done.Load() {
				runtime.Gosched()
			}
		})
	}
	// Spin for 200 ms and until the host's clock counted enough ticks for
	// its share (where /proc/stat is there), within a hang guard.
	_, t0 := hostTicks()
	start := time.Now()
	for time.Since(start) < time.Minute {
		_, t1 := hostTicks()
		if time.Since(start) >= 200*time.Millisecond && (t0 == 0 || t1-t0 >= 2*minHostTicks) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	done.Store(true)
	wg.Wait()
	b := Take()
	var w Window
	w.Add(a, b)
	r := w.Report()
	assert.Positive(t, r.ProcessCPU, "spinning goroutines used CPU")
	assert.LessOrEqual(t, r.ProcessCPU, 110.0)
	require.False(t, math.IsNaN(r.SchedP99), "goroutines were scheduled")
	assert.LessOrEqual(t, r.SchedP50, r.SchedP99)
	assert.LessOrEqual(t, r.SchedP99, r.SchedMax)
	if _, total := hostTicks(); total > 0 {
		assert.Positive(t, r.HostCPU, "the spinning goroutines kept the host busy")
		assert.LessOrEqual(t, r.HostCPU, 100.0)
	}
}

// TestShortWindowHasNoHostShare: a window of a few clock ticks has no
// host CPU share (one tick of a 10 ms run read as 100% busy).
func TestShortWindowHasNoHostShare(t *testing.T) {
	w := Window{hostBusy: 1, hostTotal: 1}
	assert.True(t, math.IsNaN(w.Report().HostCPU))
	w = Window{hostBusy: 50, hostTotal: minHostTicks}
	assert.Equal(t, 50.0, w.Report().HostCPU)
}

func TestQuantileOfBuckets(t *testing.T) {
	inf := math.Inf(1)
	w := Window{sched: []uint64{90, 9, 1}, buckets: []float64{0, 0.001, 0.01, inf}}
	r := w.Report()
	assert.Equal(t, 1.0, r.SchedP50, "rank 50 is in the first bucket: its upper bound, in ms")
	assert.Equal(t, 10.0, r.SchedP99, "rank 99 is in the second")
	assert.Equal(t, 10.0, r.SchedMax, "the unbounded bucket reports its lower bound")
	assert.True(t, math.IsNaN((&Window{}).Report().SchedP99), "no samples: no quantile")
}
