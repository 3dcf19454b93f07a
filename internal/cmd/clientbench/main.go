// Command clientbench measures the aiperf client's ceiling (`make bench`).
//
// First, pinned (-pinned, Linux with taskset and two CPUs): a neutral SSE
// server (this binary, -role server) on CPU 0 and, in turn, aiperf and a
// minimal hand-written net/http client (-role minimal) on CPU 1, each a
// process of its own, in a network namespace of its own where permitted;
// for each it prints req/s, the client's and the server's CPU time per
// request (/proc/PID/stat), loopback TCP segments per request
// (/proc/net/snmp) and, per request, the counters that explain them
// (context switches, read calls, page faults, the server's segments sent
// and received from TCP_INFO).
//
// Then it starts aiperf-mock-server (--fast unless -mock-flags says
// otherwise) as a separate process and, in one run, measures: requests/s and SSE chunks/s
// of the full aiperf client path (bench.Run: scheduler, OpenAI client, SSE
// parsing, token counting, records) at concurrency 1, 64 and 512, each beside a minimal hand-written Go HTTP/SSE
// loop (the baseline); then the achieved rate and send lag at constant 1,000
// and 5,000 req/s with default and precise pacing; then the cost of scraping
// the server's metrics (the default): the same load with and without it.
// Figures are ratios against a baseline measured in the same run, so a noisy
// machine affects both.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// osl is the output length of the ceiling runs; the pacing runs use a short
// rateOSL so that they measure the scheduler, not the two cores' chunk
// throughput (5,000 req/s × 64 chunks would saturate client and mock alike).
const (
	osl     = 64
	rateOSL = 2
)

func main() {
	mockBin := flag.String("mock", "bin/aiperf-mock-server", "aiperf-mock-server binary")
	serverURL := flag.String("url", "", "measure against this already running server instead of starting the mock (e.g. one pinned with taskset)")
	dur := flag.Duration("duration", 3*time.Second, "length of each measurement")
	flag.IntVar(&rounds, "rounds", rounds, "alternating rounds per concurrency level (medians are reported)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Func("concurrency", "comma-separated concurrency levels (default 1,64,512)", func(v string) error { return parseList(v, &levels) })
	flag.Func("rates", "comma-separated request rates (default 1000,5000)", func(v string) error { return parseList(v, &rates) })
	flag.StringVar(&mockFlags, "mock-flags", mockFlags, "flags of the mock server (e.g. \"--ttft 20 --itl 2\" for a server whose latency, not its CPU, bounds the load)")
	flag.StringVar(&aiperfBin, "aiperf", aiperfBin, "aiperf binary (trial start-up)")
	flag.IntVar(&rxUsecs, "rx-usecs", rxUsecs, "aiperf's --rx-coalesce-usecs in every measurement (-1: its default)")
	flag.IntVar(&startups, "startup", startups, "trials of the start-up measurement (0: none)")
	flag.Func("memory", "comma-separated request counts of the memory and post-run measurement (default 20000,200000; empty: none)",
		func(v string) error { return parseList(v, &memoryRuns) })
	flag.Func("truth", "comma-separated concurrency levels of the client's added error against the mock's own timing (default 1,16,64,256,512; empty: none)",
		func(v string) error { return parseList(v, &truthLevels) })
	flag.Func("scrape", "comma-separated concurrency levels of the scraping comparison (default 1,64; empty: none)",
		func(v string) error { return parseList(v, &scrapeLevels) })
	role, conc, count := pinnedFlags()
	flag.Parse()
	if *role != "" {
		if err := runRole(*role, *serverURL, *conc, *count); err != nil {
			fmt.Fprintf(os.Stderr, "clientbench -role %s: %v\n", *role, err)
			os.Exit(1)
		}
		return
	}
	if len(pinnedLevels) > 0 {
		inNetns()
	}
	if privateNetns() {
		if err := loopbackUp(); err != nil {
			fmt.Fprintln(os.Stderr, "clientbench:", err)
			os.Exit(1)
		}
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	if err := run(*mockBin, *serverURL, *dur); err != nil {
		fmt.Fprintln(os.Stderr, "clientbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// median of a few measurements.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

var (
	rounds       = 3
	levels       = []int{1, 64, 512}
	rates        = []float64{1000, 5000}
	scrapeLevels = []int{1, 64}
	mockFlags    = "--fast"
	rxUsecs      = -1 // aiperf's --rx-coalesce-usecs (-1: its default)
)

// parseList parses "a,b,c" into a list of ints or floats.
func parseList[T int | float64](v string, out *[]T) error {
	*out = nil
	for f := range strings.SplitSeq(v, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return err
		}
		*out = append(*out, T(x))
	}
	return nil
}

func run(mockBin, url string, dur time.Duration) error {
	if err := pinned(); err != nil {
		return err
	}
	if err := callgrindCounts(); err != nil {
		return err
	}
	if url == "" && len(levels)+len(rates)+len(scrapeLevels)+len(memoryRuns)+startups > 0 {
		var stop func()
		var err error
		if url, stop, err = startMock(mockBin); err != nil {
			return err
		}
		defer stop()
	}
	for _, stage := range []func(string, time.Duration) error{
		func(url string, dur time.Duration) error { return ceiling(mockBin, url, dur) }, pacing, scrapeCost,
		func(url string, _ time.Duration) error { return startup(url) },
		func(url string, _ time.Duration) error { return memory(url) },
		func(string, time.Duration) error { return addedError(mockBin, dur) },
	} {
		if err := stage(url, dur); err != nil {
			return err
		}
	}
	return nil
}

// ceiling prints requests/s and chunks/s of aiperf and of the in-process
// baseline loop at each of levels, sharing the machine with the mock.
func ceiling(mockBin, url string, dur time.Duration) error {
	if len(levels) == 0 {
		return nil
	}
	fmt.Printf("client ceiling against %s %s at %s (%d output tokens = %d SSE chunks per request),\n"+
		"median of %d alternating rounds of %s per client\n\n", mockBin, mockFlags, url, osl, osl, rounds, dur)
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "concurrency\tbaseline req/s\taiperf req/s\tratio\tbaseline chunks/s\taiperf chunks/s\tratio\t")
	for _, c := range levels {
		// Alternate the two clients over several rounds and keep medians:
		// on two shared cores a single pair of measurements is mostly noise.
		var bReq, bChunks, aReq, aChunks []float64
		for r := range rounds {
			for i := range 2 {
				var req, chunks float64
				var err error
				if (r+i)%2 == 0 {
					req, chunks, err = baseline(url, c, dur)
					bReq, bChunks = append(bReq, req), append(bChunks, chunks)
				} else {
					req, chunks, err = aiperfConcurrency(url, c, dur)
					aReq, aChunks = append(aReq, req), append(aChunks, chunks)
				}
				if err != nil {
					return fmt.Errorf("concurrency %d: %w", c, err)
				}
			}
		}
		b, a, bc, ac := median(bReq), median(aReq), median(bChunks), median(aChunks)
		fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%.2f×\t%.0f\t%.0f\t%.2f×\t\n", c, b, a, a/b, bc, ac, ac/bc)
	}
	tw.Flush()

	return nil
}

// pacing prints the achieved rate and send lag at each of rates.
func pacing(url string, dur time.Duration) error {
	if len(rates) == 0 {
		return nil
	}
	fmt.Printf("\npacing: constant rate for %s, %d output tokens per request\n", dur, rateOSL)
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target req/s\tpacing\tachieved req/s\tdeviation\tsend lag p50 ms\tp99 ms\tmax ms\tclient-bound\t")
	for _, rate := range rates {
		for _, precise := range []bool{false, true} {
			r, err := aiperfRate(url, rate, precise, dur)
			if err != nil {
				return fmt.Errorf("aiperf at %g req/s: %w", rate, err)
			}
			pacing := "default"
			if precise {
				pacing = "precise"
			}
			lag := r.Audit.SendLagMs
			fmt.Fprintf(tw, "%.0f\t%s\t%.1f\t%+.2f%%\t%.3f\t%.3f\t%.3f\t%v\t\n", rate, pacing, r.Audit.AchievedRate,
				100*(r.Audit.AchievedRate-rate)/rate, lag.P50, lag.P99, lag.Max, r.Audit.ClientBound)
		}
	}
	tw.Flush()
	return nil
}

// startMock runs the mock server on a free port and returns its URL.
func startMock(bin string) (string, func(), error) { return startMockWith(bin, mockFlags) }

// startMockWith starts the mock with flags on a free port.
func startMockWith(bin, flags string) (string, func(), error) {
	cmd := exec.Command(bin, append(strings.Fields(flags), "--port", "0")...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start mock server %s (run make build first): %w", bin, err)
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
	sc := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`http://[0-9.:]+`)
	for sc.Scan() {
		if u := re.FindString(sc.Text()); u != "" {
			go io.Copy(io.Discard, stderr)
			return u, stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("mock server exited before listening")
}

func profile(url string, osl int) plan.Profile {
	p := plan.NewProfile()
	p.Model = []string{"mock-model"}
	p.URL = []string{url}
	p.Streaming = true
	p.SyntheticInputTokensMean = 32
	p.OutputTokensMean = plan.Ptr(osl)
	p.NumDatasetEntries = 16
	if rxUsecs >= 0 {
		p.RxCoalesceUsecs = plan.Ptr(rxUsecs)
	}
	return p
}

func aiperfConcurrency(url string, c int, dur time.Duration) (reqs, chunks float64, err error) {
	p := profile(url, osl)
	p.Concurrency = plan.Ptr(c)
	p.BenchmarkDuration = plan.Ptr(dur.Seconds())
	p.BenchmarkGracePeriod = plan.Ptr(5.0)
	r, err := bench.Run(context.Background(), bench.Options{Profile: p, Version: "bench"})
	if err != nil {
		return 0, 0, err
	}
	m, _ := r.Profiling.Get("request_throughput")
	d, _ := r.Profiling.Get("benchmark_duration")
	n := 0
	for _, rec := range r.Records {
		if rec.OK() && rec.PhaseKind == plan.KindProfiling {
			n += rec.ResponseNs.Len()
		}
	}
	return m.Value, float64(n) / d.Value, nil
}

func aiperfRate(url string, rate float64, precise bool, dur time.Duration) (*result.Run, error) {
	p := profile(url, rateOSL)
	p.RequestRate = plan.Ptr(rate)
	p.RequestRateMode = plan.RateConstant
	p.RequestCount = plan.Ptr(int(rate * dur.Seconds()))
	p.PrecisePacing = precise
	return bench.Run(context.Background(), bench.Options{Profile: p, Version: "bench"})
}

// baseline is the minimal hand-written loop: c goroutines, one tuned
// transport, POST, read SSE lines until [DONE], count content chunks.
func baseline(url string, c int, dur time.Duration) (reqs, chunks float64, err error) {
	tr := &http.Transport{MaxIdleConns: c, MaxIdleConnsPerHost: c, DisableCompression: true,
		ForceAttemptHTTP2: false, TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	body, err := endpoint.Body(endpoint.Request{EndpointType: plan.EndpointChat, Model: "mock-model",
		Prompt: strings.Repeat("hello ", 32), MaxTokens: osl, Streaming: true})
	if err != nil {
		return 0, 0, err
	}
	var nReq, nChunks atomic.Int64
	var firstErr atomic.Value
	end := time.Now().Add(dur)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := bufio.NewReaderSize(nil, 16<<10)
			for time.Now().Before(end) {
				req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				br.Reset(resp.Body)
				n := int64(0)
				for {
					line, err := br.ReadSlice('\n')
					if bytes.HasPrefix(line, []byte("data: [DONE]")) || err != nil {
						break
					}
					if bytes.Contains(line, []byte(`"content":"`)) && !bytes.Contains(line, []byte(`"content":""`)) {
						n++
					}
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				nReq.Add(1)
				nChunks.Add(n)
			}
		}()
	}
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return 0, 0, e.(error)
	}
	secs := time.Since(start).Seconds()
	return float64(nReq.Load()) / secs, float64(nChunks.Load()) / secs, nil
}
