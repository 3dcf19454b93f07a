package selfcheck

import (
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A window over busy goroutines sees the process's CPU and the scheduler's
// latency; the quantiles read the histogram's buckets.
func TestWindow(t *testing.T) {
	a := Take()
	var wg sync.WaitGroup
	stop := time.Now().Add(200 * time.Millisecond)
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for time.Now().Before(stop) {
				runtime.Gosched()
			}
		})
	}
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

func TestQuantileOfBuckets(t *testing.T) {
	inf := math.Inf(1)
	w := Window{sched: []uint64{90, 9, 1}, buckets: []float64{0, 0.001, 0.01, inf}}
	r := w.Report()
	assert.Equal(t, 1.0, r.SchedP50, "rank 50 is in the first bucket: its upper bound, in ms")
	assert.Equal(t, 10.0, r.SchedP99, "rank 99 is in the second")
	assert.Equal(t, 10.0, r.SchedMax, "the unbounded bucket reports its lower bound")
	assert.True(t, math.IsNaN((&Window{}).Report().SchedP99), "no samples: no quantile")
}
