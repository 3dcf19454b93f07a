package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// scrapeCost runs the same load with and without scraping the server's
// metrics (every 333 ms, the default), in adjacent pairs whose order
// alternates, and prints the medians of request throughput and TTFT p50 and
// the median of the per-pair ratios (a pair shares the machine's state, so
// its ratio is less noisy than the ratio of two medians).
func scrapeCost(url string, dur time.Duration) error {
	if len(scrapeLevels) == 0 {
		return nil
	}
	fmt.Printf("\nserver-metrics scraping (default interval) against no scraping, %d alternating pairs of %s runs\n", rounds, dur)
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "concurrency\treq/s off\treq/s on\tratio p25/p50/p75\tTTFT p50 ms off\tTTFT p50 ms on\tratio p25/p50/p75\t")
	for _, c := range scrapeLevels {
		var reqs, ttfts [2][]float64 // [0]: off, [1]: on
		var reqRatio, ttftRatio []float64
		for r := range rounds {
			for i := range 2 {
				on := (r+i)%2 == 1
				p := profile(url, osl)
				p.Concurrency, p.BenchmarkDuration, p.BenchmarkGracePeriod = plan.Ptr(c), plan.Ptr(dur.Seconds()), plan.Ptr(5.0)
				p.NoServerMetrics = !on
				run, err := bench.Run(context.Background(), bench.Options{Profile: p, Version: "bench"})
				if err != nil {
					return fmt.Errorf("scraping comparison at concurrency %d: %w", c, err)
				}
				k := 0
				if on {
					k = 1
				}
				thr, _ := run.Profiling.Get("request_throughput")
				ttft, _ := run.Profiling.Get("time_to_first_token")
				reqs[k], ttfts[k] = append(reqs[k], thr.Value), append(ttfts[k], ttft.Stats.P50)
			}
			reqRatio = append(reqRatio, reqs[1][r]/reqs[0][r])
			ttftRatio = append(ttftRatio, ttfts[1][r]/ttfts[0][r])
		}
		fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%s\t%.3f\t%.3f\t%s\t\n", c, median(reqs[0]), median(reqs[1]), quartiles(reqRatio),
			median(ttfts[0]), median(ttfts[1]), quartiles(ttftRatio))
	}
	tw.Flush()
	return nil
}

// quartiles formats the 25th, 50th and 75th percentiles of ratios.
func quartiles(xs []float64) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(q float64) float64 { return s[int(q*float64(len(s)-1)+0.5)] }
	return fmt.Sprintf("%.3f/%.3f/%.3f×", at(0.25), at(0.5), at(0.75))
}
