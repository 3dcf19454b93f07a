package servermetrics

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// Defaults of Options.
const (
	DefaultInterval    = 333 * time.Millisecond // AIPerf's scrape interval
	DefaultTimeout     = 2 * time.Second        // a periodic scrape
	DefaultMarkTimeout = time.Second            // Start's and Mark's scrapes, waiting included
)

// PhaseReset is the phase to mark (begin only) right after a KV-cache reset,
// so that ResetEvidence can read the prefix-cache counters from there.
const PhaseReset = "reset"

// Target is one endpoint to scrape.
type Target struct {
	URL    string // the full metrics URL, e.g. http://gpu1:8000/metrics
	Source string // SourceServer or SourceGPU
	// Anonymous targets get none of Options.Headers (a default DCGM
	// exporter the user did not name: the server's credentials are not
	// its business). The others get them as scrapeHeader says: the
	// credential headers only on an inference URL's origin (Origins).
	Anonymous bool
}

// Options configure a Collector.
type Options struct {
	Endpoints []Target
	// Interval between periodic scrapes (DefaultInterval when 0).
	Interval time.Duration
	// Timeout bounds a periodic scrape (DefaultTimeout when 0).
	Timeout time.Duration
	// MarkTimeout bounds Start's baseline scrape and each Mark, waiting for
	// an endpoint's periodic scrape in flight included (DefaultMarkTimeout
	// when 0), so that a mark never holds the load up for longer.
	MarkTimeout time.Duration
	// Headers are the benchmark's (the server's auth); they are never
	// logged or exported. A target that is not Anonymous gets those that
	// are not credentials (plan.IsSecretHeader), and the credentials too
	// when its URL has no userinfo and is on one of Origins (scrapeHeader).
	Headers http.Header
	// Origins are the inference URLs (--url): the origins (scheme, host,
	// port) where the credential headers may go. None: they go nowhere.
	Origins []string
	// Now is the run's monotonic clock in nanoseconds; nil starts one.
	Now func() int64
	// SliceDuration adds per-slice statistics to every series (AIPerf's
	// --slice-duration); 0 means none.
	SliceDuration time.Duration
	// Warmup names the phases that are not part of the profiling span
	// besides "warmup".
	Warmup []string
	// MaxSeries bounds the series each endpoint's scrapes keep, counted as
	// Prometheus counts them (DefaultMaxSeries when 0): the first of a
	// larger scrape are kept, and new series once an endpoint holds that
	// many; one warning says what was dropped.
	MaxSeries int
	// Warn, when set, hears each endpoint's first failure (and a first slow
	// parse) as it happens, from the scraping goroutines: it must be safe
	// for concurrent use. Result.Warnings has them all at Stop.
	Warn func(msg string)
	// Redact cleans what a server wrote that aiperf keeps or shows (label
	// names and values, family names and help, failure messages), since a
	// server may echo the headers or the URL of a scrape; nil keeps it as it
	// is.
	Redact func(string) string
}

// Collector scrapes Prometheus endpoints while a run lasts: one goroutine
// per endpoint on the interval, each with its own HTTP client, and a
// synchronous scrape of every endpoint at each Mark. Its methods are safe
// for concurrent use.
type Collector struct {
	o      Options
	now    func() int64
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	eps    []*endpoint
	seed   maphash.Seed
	start  int64

	mu       sync.Mutex
	phases   []Phase // EndNs < 0 while open
	marks    []mark
	stopping bool // Stop began: no more marks
	stop     sync.Once
	done     Result
}

// mark is a phase boundary's scrape on one endpoint.
type mark struct {
	phase int // index in phases
	begin bool
	ep    int   // index in eps
	t     int64 // the scrape's time
}

// endpoint is one target's state. sem serialises its scrapes, so samples
// are in the order the server produced them; mu guards the rest.
type endpoint struct {
	Target
	display string
	header  http.Header // what of Options.Headers its scrapes send
	client  *http.Client
	sem     chan struct{}

	mu         sync.Mutex
	buf        *endpointBuf
	scrapes    int
	failures   int
	firstErr   string
	lastErr    string
	firstNs    int64
	lastNs     int64
	latencySum int64
	updates    int
	lastHash   uint64
	slowNote   string    // why its scrapes are costly, once said
	capped     seriesCap // what its series cap dropped
}

// Start checks o, scrapes every endpoint once (the baseline, bounded by
// MarkTimeout) and starts the periodic scrapes, which run until Stop or
// until ctx ends. An endpoint that fails is warned about and kept.
func Start(ctx context.Context, o Options) (*Collector, error) {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MarkTimeout <= 0 {
		o.MarkTimeout = DefaultMarkTimeout
	}
	if o.MaxSeries <= 0 {
		o.MaxSeries = DefaultMaxSeries
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	c := &Collector{o: o, now: o.Now, seed: maphash.MakeSeed()}
	if c.now == nil {
		t0 := time.Now()
		c.now = func() int64 { return int64(time.Since(t0)) }
	}
	for _, t := range o.Endpoints {
		u, err := url.Parse(t.URL)
		switch {
		case err != nil || u.Host == "":
			return nil, fmt.Errorf("server metrics: %q is not a URL", plan.RedactURL(t.URL))
		case u.Scheme != "http" && u.Scheme != "https":
			return nil, fmt.Errorf("server metrics: %s must use http or https", plan.RedactURL(t.URL))
		case t.Source != SourceServer && t.Source != SourceGPU:
			return nil, fmt.Errorf("server metrics: %s has source %q, want %q or %q",
				plan.RedactURL(t.URL), t.Source, SourceServer, SourceGPU)
		}
		c.eps = append(c.eps, &endpoint{Target: t, display: plan.RedactURL(t.URL), header: scrapeHeader(t, u, o.Headers, o.Origins),
			client: newClient(o.Timeout), sem: make(chan struct{}, 1), buf: newEndpointBuf(o.MaxSeries, o.Redact)})
	}
	c.ctx, c.cancel = context.WithCancel(ctx)
	c.start = c.now()
	c.scrapeAll(true, nil)
	for _, ep := range c.eps {
		c.wg.Add(1)
		go c.loop(ep)
	}
	return c, nil
}

// loop scrapes ep on the interval until the collector stops.
func (c *Collector) loop(ep *endpoint) {
	defer c.wg.Done()
	tick := time.NewTicker(c.o.Interval)
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(c.ctx, c.o.Timeout)
		c.scrape(ctx, ep, false)
		cancel()
	}
}

// Mark scrapes every endpoint at once, tagged as the beginning or the end
// of phase, and waits for them (at most MarkTimeout): counter deltas then
// cover exactly the phase. Call it right before a phase's first request and
// right after its last response. It does nothing after Stop, and an end
// without a begin marks nothing.
func (c *Collector) Mark(phase string, begin bool) {
	c.mu.Lock()
	pi := -1
	switch {
	case c.stopping:
	case begin:
		pi = len(c.phases)
		c.phases = append(c.phases, Phase{Name: phase, BeginNs: c.now(), EndNs: -1})
	default:
		for i := len(c.phases) - 1; i >= 0 && pi < 0; i-- {
			if c.phases[i].Name == phase && c.phases[i].EndNs < 0 {
				pi = i
			}
		}
	}
	if pi >= 0 {
		c.wg.Add(1) // Stop waits for the mark's scrapes
		defer c.wg.Done()
	}
	c.mu.Unlock()
	if pi < 0 {
		return
	}
	times := c.scrapeAll(true, nil)
	end := c.now()
	if begin {
		times = c.refreshBegin(pi, times, end)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	last := int64(-1)
	for i, t := range times {
		if t >= 0 {
			c.marks = append(c.marks, mark{phase: pi, begin: begin, ep: i, t: t})
			last = max(last, t)
		}
	}
	if !begin {
		// The phase ends with its end marks' scrapes: a periodic scrape that
		// lands after them (before this goroutine reads the clock again) is
		// after the phase.
		if last < 0 {
			last = end
		}
		c.phases[pi].EndNs = last
	}
}

// staleMark is how long before a begin Mark returns an endpoint's mark
// scrape may have landed (while Mark waited for a slower endpoint) and
// still stand for the phase's beginning.
const staleMark = 20 * time.Millisecond

// refreshBegin renews a begin mark that waited for a slower endpoint, or
// one that did not answer: the load starts only when Mark returns, so a
// sample an endpoint gave long before would count the wait as part of the
// phase (an idle stretch in its rates and gauge averages). The phase then
// begins now, and the endpoints whose marks are stale are scraped again;
// those that did not answer are not waited for twice. It returns the
// marks' times.
func (c *Collector) refreshBegin(pi int, times []int64, end int64) []int64 {
	var stale []bool
	for _, t := range times {
		stale = append(stale, t >= 0 && end-t > int64(staleMark))
	}
	if !slices.Contains(stale, true) {
		return times
	}
	c.mu.Lock()
	c.phases[pi].BeginNs = c.now()
	c.mu.Unlock()
	again := c.scrapeAll(true, func(i int) bool { return stale[i] })
	for i, t := range again {
		if stale[i] {
			times[i] = t
		}
	}
	return times
}

// stopped reports whether Stop began.
func (c *Collector) stopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopping
}

// scrapeAll scrapes every endpoint (or those only picks, when not nil)
// concurrently within MarkTimeout and returns each scrape's time (−1 where
// it failed or was not picked).
func (c *Collector) scrapeAll(pinned bool, only func(int) bool) []int64 {
	ctx, cancel := context.WithTimeout(c.ctx, c.o.MarkTimeout)
	defer cancel()
	times := make([]int64, len(c.eps))
	var wg sync.WaitGroup
	for i, ep := range c.eps {
		times[i] = -1
		if only == nil || only(i) {
			wg.Go(func() { times[i] = c.scrape(ctx, ep, pinned) })
		}
	}
	wg.Wait()
	return times
}

// scrape fetches ep once and stores the sample; it returns the sample's
// time, or −1 when the scrape failed or the collector stopped.
func (c *Collector) scrape(ctx context.Context, ep *endpoint, pinned bool) int64 {
	select {
	case ep.sem <- struct{}{}:
	case <-ctx.Done():
		c.fail(ep, errTimeout)
		return -1
	}
	defer func() { <-ep.sem }()
	t0 := c.now()
	f, err := fetch(ctx, ep.client, ep.URL, ep.header, c.o.MaxSeries, c.seed)
	if err != nil {
		c.fail(ep, err)
		return -1
	}
	if f.parse > max(c.o.Interval/4, slowParse) {
		c.slow(ep, f)
	}
	h := maphash.Bytes(c.seed, f.body)
	ep.mu.Lock()
	defer ep.mu.Unlock()
	t := c.now()
	churned := ep.buf.churned
	ep.buf.add(f.fams, t, t-t0, pinned)
	c.capped(ep, f.series, ep.buf.churned-churned)
	if ep.scrapes == 0 {
		ep.firstNs = t
	}
	ep.scrapes++
	ep.lastNs = t
	ep.latencySum += t - t0
	if ep.scrapes == 1 || h != ep.lastHash {
		ep.updates++
	}
	ep.lastHash = h
	return t
}

// fail records a failed scrape; the first failure of an endpoint is warned
// about. A scrape cut short by Stop is not a failure.
func (c *Collector) fail(ep *endpoint, err error) {
	if c.ctx.Err() != nil {
		return
	}
	msg := c.o.Redact(err.Error())
	if errors.Is(err, errTimeout) {
		msg = "timed out"
	}
	ep.mu.Lock()
	ep.failures++
	ep.lastErr = msg
	first := ep.firstErr == ""
	if first {
		ep.firstErr = msg
	}
	ep.mu.Unlock()
	if first && c.o.Warn != nil {
		c.o.Warn(warning(ep, msg, 0, 0))
	}
}

// slowParse is the least parsing time slow warns about (a variable for the
// tests).
var slowParse = 20 * time.Millisecond

// slow warns, once per endpoint, that parsing its body takes more than a
// quarter of the interval (and slowParse): the scrapes then cost the
// client real CPU.
func (c *Collector) slow(ep *endpoint, f fetched) {
	msg := fmt.Sprintf("parsing its %d KiB body took %d ms, more than a quarter of the %d ms interval",
		len(f.body)>>10, f.parse.Milliseconds(), c.o.Interval.Milliseconds())
	ep.mu.Lock()
	first := ep.slowNote == ""
	if first {
		ep.slowNote = msg
	}
	ep.mu.Unlock()
	if first && c.o.Warn != nil {
		c.o.Warn(warning(ep, msg, 0, 0))
	}
}

// capped records what ep's series cap dropped from a scrape (series: the
// scrape's count when it was over the cap; churned: new series dropped) and
// warns the first time, from the scraping goroutine; ep.mu is held.
func (c *Collector) capped(ep *endpoint, series, churned int) {
	ep.capped.largest = max(ep.capped.largest, series)
	ep.capped.churned += churned
	if (series > 0 || churned > 0) && !ep.capped.warned {
		ep.capped.warned = true
		if c.o.Warn != nil {
			c.o.Warn(warning(ep, fmt.Sprintf("more than %d series (--server-metrics-max-series): the first are kept, the others dropped", c.o.MaxSeries), 0, 0))
		}
	}
}

// warning is the line that says an endpoint failed.
func warning(ep *endpoint, first string, failures, total int) string {
	msg := fmt.Sprintf("%s: scrape %s: %s", sourceName(ep.Source), ep.display, first)
	if total > 0 {
		msg += fmt.Sprintf(" (%d of %d scrapes failed)", failures, total)
	}
	return msg + "; collection goes on"
}

// Stop ends the scrapes and reduces them (a phase still open ends now). It
// may be called more than once; later calls return the same Result.
func (c *Collector) Stop() Result {
	c.stop.Do(func() {
		c.mu.Lock()
		c.stopping = true
		c.mu.Unlock()
		c.cancel()
		c.wg.Wait() // the periodic scrapes and any mark in progress
		end := c.now()
		r := &Result{StartNs: c.start, EndNs: end, timeline: &timeline{marks: c.marks}}
		for _, ep := range c.eps {
			ep.client.CloseIdleConnections()
			r.timeline.endpoints = append(r.timeline.endpoints, ep.buf)
			r.Endpoints = append(r.Endpoints, ep.summary(c.o.Interval))
			if ep.failures > 0 {
				r.Warnings = append(r.Warnings, warning(ep, ep.firstErr, ep.failures, ep.failures+ep.scrapes))
			}
			if ep.slowNote != "" {
				r.Warnings = append(r.Warnings, warning(ep, ep.slowNote, 0, 0))
			}
			if note := ep.capped.note(c.o.MaxSeries); note != "" {
				r.Warnings = append(r.Warnings, warning(ep, note, 0, 0))
			}
		}
		for _, p := range c.phases {
			if p.EndNs < 0 {
				p.EndNs = end
			}
			r.Phases = append(r.Phases, p)
		}
		reduce(r, c.marks, c.o)
		c.done = *r
	})
	return c.done
}

// summary is the endpoint's Endpoint record.
func (ep *endpoint) summary(interval time.Duration) Endpoint {
	e := Endpoint{URL: ep.display, Source: ep.Source, Scrapes: ep.scrapes, Failures: ep.failures, Interval: interval,
		LastError: ep.lastErr, FirstNs: ep.firstNs, LastNs: ep.lastNs, Updates: ep.updates, Retained: len(ep.buf.times)}
	if ep.scrapes > 0 {
		e.AvgLatencyMs = float64(ep.latencySum) / float64(ep.scrapes) / 1e6
	}
	return e
}
