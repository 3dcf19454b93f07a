package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"text/tabwriter"
	"time"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
)

var truthLevels = []int{1, 16, 64, 256, 512}

// bucketHalfWidth is half the relative width of the mock's timing
// histogram buckets: the resolution of its quantiles.
const bucketHalfWidth = 0.0115

// truthFlags are the mock's latencies for the added-error measurement: a
// server whose timing, not its CPU, shapes the load.
const truthFlags = "--ttft 20 --itl 4"

// addedError measures what the client adds to TTFT and ITL: at each
// concurrency it runs the load against a mock that times itself
// (GET /mock/timing: when each reply's chunks were flushed) and prints the
// client's TTFT and inter-chunk p50 minus the mock's first-chunk and gap
// p50, beside the client's own health figures: the scheduling latency p99,
// its CPU and the host's (the calibration of the self-audit's CLIENT-BOUND
// thresholds).
func addedError(mockBin string, dur time.Duration) error {
	if len(truthLevels) == 0 {
		return nil
	}
	url, stop, err := startMockWith(mockBin, truthFlags)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("\nclient-added error against the mock's own timing (%s, 64 chunks per request, %s per level)\n", truthFlags, dur)
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "concurrency\tTTFT p50 ms client\tserver\tadded\tchunk gap p50 ms client\tserver\tadded\tsched p99 ms\tclient CPU %\thost CPU %\tclient-bound\t")
	for _, c := range truthLevels {
		if err := post(url + "/mock/timing/clear"); err != nil {
			return err
		}
		p := profile(url, osl)
		p.ExtraInputs = []string{"ignore_eos:true"}
		p.Concurrency, p.BenchmarkDuration, p.BenchmarkGracePeriod = plan.Ptr(c), plan.Ptr(dur.Seconds()), plan.Ptr(30.0)
		p.NoServerMetrics = true
		run, err := bench.Run(context.Background(), bench.Options{Profile: p, Version: "bench"})
		if err != nil {
			return fmt.Errorf("added error at concurrency %d: %w", c, err)
		}
		var t mock.Timing
		if err := getJSON(url+"/mock/timing", &t); err != nil {
			return err
		}
		ttft, _ := run.Profiling.Get("time_to_first_token")
		icl, _ := run.Profiling.Get("inter_chunk_latency")
		if ttft.Stats == nil || icl.Stats == nil {
			return fmt.Errorf("added error at concurrency %d: no streamed response", c)
		}
		sTTFT, sGap := t.FirstChunk.P50US/1e3, t.Gap.P50US/1e3
		sched, cpu, host := 0.0, 0.0, 0.0
		if h := run.Audit.Health; h != nil {
			sched, cpu = h.SchedLatencyP99Ms, h.ProcessCPUPct
			if h.HostCPUPct != nil {
				host = *h.HostCPUPct
			}
		}
		fmt.Fprintf(tw, "%d\t%.3f\t%.3f ±%.3f\t%+.3f\t%.3f\t%.3f ±%.3f\t%+.3f\t%.2f\t%.0f\t%.0f\t%v\t\n", c, ttft.Stats.P50, sTTFT,
			bucketHalfWidth*sTTFT, ttft.Stats.P50-sTTFT, icl.Stats.P50, sGap, bucketHalfWidth*sGap, icl.Stats.P50-sGap, sched,
			cpu, host, run.Audit.ClientBound)
	}
	tw.Flush()
	fmt.Println("(the mock's quantiles are estimated inside log buckets 2.3% wide: ± is half a bucket)")
	return nil
}

func post(url string) error {
	resp, err := http.Post(url, "", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s", url, resp.Status)
	}
	return nil
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
