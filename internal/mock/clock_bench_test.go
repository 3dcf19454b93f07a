//go:build linux

package mock

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkClock paces N streams of tokens 2 ms apart, as many as b.N
// releases in all, and reports how late the waiting goroutines resumed
// (p50, p99 in µs: the clock's lateness plus the Go scheduler's) and the
// process's CPU time per release and as a share of one core. "clock" is
// the timing thread; "timer" is a Go timer per wait, the mock's pacing
// before it.
func BenchmarkClock(b *testing.B) {
	for _, mode := range []string{"clock", "timer"} {
		for _, streams := range []int{1, 64, 512} {
			b.Run(fmt.Sprintf("%s/streams=%d", mode, streams), func(b *testing.B) {
				benchPacing(b, mode, streams, 2*time.Millisecond)
			})
		}
	}
}

func benchPacing(b *testing.B, mode string, streams int, itl time.Duration) {
	var c *clock
	if mode == "clock" {
		c = startClock()
		defer c.stop()
	}
	var late logHist
	var wg sync.WaitGroup
	cpu0, wall0 := processCPU(), time.Now()
	b.ResetTimer()
	first := time.Now().Add(5 * time.Millisecond)
	for i := range streams {
		n := b.N / streams
		if i < b.N%streams {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := make(chan struct{}, 1)
			start := first.Add(time.Duration(i) * itl / time.Duration(streams)) // spread evenly
			for k := range n {
				due := start.Add(time.Duration(k) * itl)
				if c != nil {
					c.wait(context.Background(), due, tick)
				} else {
					time.Sleep(time.Until(due))
				}
				late.observe(int64(time.Since(due)))
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	cpu, wall := processCPU()-cpu0, time.Since(wall0)
	s := late.snapshot()
	b.ReportMetric(s.quantile(0.5)/1e3, "late-p50-µs")
	b.ReportMetric(s.quantile(0.99)/1e3, "late-p99-µs")
	b.ReportMetric(float64(cpu)/float64(b.N)/1e3, "cpu-µs/release")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%core")
}

// processCPU returns the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
