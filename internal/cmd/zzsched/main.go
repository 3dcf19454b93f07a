package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"syscall"
	"time"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/plan"
)

func hist() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64Histogram()
}

func q(a, b *metrics.Float64Histogram, p float64) float64 {
	var tot uint64
	d := make([]uint64, len(b.Counts))
	for i := range b.Counts {
		d[i] = b.Counts[i] - a.Counts[i]
		tot += d[i]
	}
	r := uint64(math.Ceil(p * float64(tot)))
	var c uint64
	for i := range d {
		c += d[i]
		if c >= r {
			return b.Buckets[i+1]
		}
	}
	return math.Inf(1)
}

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	c, _ := strconv.Atoi(os.Args[2])
	p := plan.NewProfile()
	p.Model = []string{"mock-model"}
	p.URL = []string{os.Args[1]}
	p.Streaming = true
	p.OutputTokensMean = plan.Ptr(64)
	p.ExtraInputs = []string{"ignore_eos:true"}
	p.Concurrency = plan.Ptr(c)
	p.BenchmarkDuration = plan.Ptr(6.0)
	p.NoServerMetrics = true
	a := hist()
	c0, t0 := cpu(), time.Now()
	r, err := bench.Run(context.Background(), bench.Options{Profile: p, Version: "x"})
	if err != nil {
		panic(err)
	}
	b := hist()
	wall := time.Since(t0)
	ttft, _ := r.Profiling.Get("time_to_first_token")
	itl, _ := r.Profiling.Get("inter_token_latency")
	fmt.Printf("c=%d sched p50 %.3f p99 %.3f p999 %.3f ms; cpu %.0f%% of %d cores; ttft p50 %.2f p99 %.2f itl p50 %.3f; lag p99 %.2f; stall flagged %v\n", c,
		q(a, b, .5)*1e3, q(a, b, .99)*1e3, q(a, b, .999)*1e3, 100*float64(cpu()-c0)/float64(wall)/float64(runtime.GOMAXPROCS(0)), runtime.GOMAXPROCS(0),
		ttft.Stats.P50, ttft.Stats.P99, itl.Stats.P50, r.Audit.SendLagMs.P99, r.Audit.ClientBound)
}
