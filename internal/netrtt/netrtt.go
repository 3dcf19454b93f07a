// Package netrtt measures the network round trip to the servers of a run
// as AIPerf's --network-latency-automatic does: a fresh TCP connection to
// each server's host and port on an interval while the load runs, its
// handshake timed (one round trip, no server work; no TLS, so http and
// https measure the same). Each server's mean over its successful probes
// is the RTT the network-adjusted latencies of its requests subtract.
package netrtt

import (
	"cmp"
	"context"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of AIPerf's probing (its NETWORK_LATENCY environment settings).
const (
	DefaultInterval = time.Second     // --network-latency-ping-interval
	ConnectTimeout  = 5 * time.Second // one probe
	MinSamples      = 5               // successful probes per target Stop tops up to
	TopUpTimeout    = 3 * time.Second // Stop's top-up, all targets together
	ProbeType       = "tcp_connect"   // the samples' probe_type
)

// Target is one server to probe: a host and port, and the URL it came from
// (credentials left out) for the samples.
type Target struct {
	URL  string
	Host string
	Port int
}

// Targets are the distinct host:port of urls (a scheme's default port when
// the URL has none; http:// assumed when it has no scheme), in order.
func Targets(urls []string) []Target {
	targets, _ := TargetsOf(urls)
	return targets
}

// TargetsOf is Targets and, for each of urls, the index of its target in
// them (-1 for a URL with no host): which round trip its requests take.
func TargetsOf(urls []string) (targets []Target, of []int) {
	of = make([]int, len(urls))
	seen := map[string]int{}
	for i, raw := range urls {
		of[i] = -1
		if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" {
			continue
		}
		port := 80
		if u.Scheme == "https" {
			port = 443
		}
		if p, err := strconv.Atoi(u.Port()); err == nil {
			port = p
		}
		key := net.JoinHostPort(u.Hostname(), strconv.Itoa(port))
		if k, ok := seen[key]; ok {
			of[i] = k
			continue
		}
		seen[key], of[i] = len(targets), len(targets)
		// The URL names the target in the samples: its origin only, no
		// credentials, path or query.
		origin := u.Scheme + "://" + u.Host
		targets = append(targets, Target{URL: origin, Host: u.Hostname(), Port: port})
	}
	return targets, of
}

// Sample is one probe (AIPerf's NetworkLatencySample): when it started on
// the run's clock, its target, and the handshake's RTT, or why it failed.
type Sample struct {
	AtNs   int64  `json:"at_ns"`   // the run's monotonic clock
	WallNs int64  `json:"wall_ns"` // the same instant on the wall clock (set by the caller)
	Target Target `json:"target"`
	RTTNs  int64  `json:"rtt_ns,omitempty"`
	OK     bool   `json:"ok"`
	Err    string `json:"error,omitempty"`
}

// Options configure a Prober.
type Options struct {
	Targets  []Target
	Interval time.Duration // DefaultInterval when 0
	Now      func() int64  // the run's monotonic clock in ns
	// Dial opens one probe's connection (a net.Dialer's by default).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Prober probes its targets on the interval from Start to Stop.
type Prober struct {
	o      Options
	addrs  []string // each target's address to dial, its name resolved once
	parent context.Context
	cancel context.CancelFunc
	loop   sync.WaitGroup // the interval loop
	probes sync.WaitGroup // probes in flight

	mu      sync.Mutex
	samples []Sample
}

// Start probes in the background until Stop or ctx ends: it resolves each
// target's name once (so that a probe times the handshake, not a lookup;
// a name that does not resolve is dialled as is), probes every target at
// once, then on every interval.
func Start(ctx context.Context, o Options) *Prober {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Dial == nil {
		o.Dial = (&net.Dialer{}).DialContext
	}
	p := &Prober{o: o, parent: ctx, addrs: make([]string, len(o.Targets))}
	ctx, p.cancel = context.WithCancel(ctx)
	p.loop.Add(1)
	go func() {
		defer p.loop.Done()
		for i, t := range o.Targets {
			p.addrs[i] = resolve(ctx, t)
		}
		tick := time.NewTicker(o.Interval)
		defer tick.Stop()
		for {
			p.probeAll(ctx) // a slow handshake does not hold the next probe up
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// resolve is t's address to dial: its host name looked up once, or as is
// when the lookup fails.
func resolve(ctx context.Context, t Target) string {
	host := t.Host
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	if ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host); err == nil && len(ips) > 0 {
		host = ips[0].Unmap().String()
	}
	return net.JoinHostPort(host, strconv.Itoa(t.Port))
}

// probeAll starts a probe of every target.
func (p *Prober) probeAll(ctx context.Context) {
	for i := range p.o.Targets {
		p.probes.Add(1)
		go func() {
			defer p.probes.Done()
			p.probe(ctx, i)
		}()
	}
}

// probe times one handshake with target i and records the sample; it
// reports whether the handshake succeeded.
func (p *Prober) probe(ctx context.Context, i int) bool {
	s := Sample{AtNs: p.o.Now(), Target: p.o.Targets[i]}
	dctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	start := time.Now()
	conn, err := p.o.Dial(dctx, "tcp", p.addrs[i])
	if err == nil {
		s.RTTNs, s.OK = time.Since(start).Nanoseconds(), true
		_ = conn.Close()
	} else {
		s.Err = err.Error()
	}
	if ctx.Err() != nil && !s.OK {
		return false // cut by Stop or the run's end: not the network's failure
	}
	p.mu.Lock()
	p.samples = append(p.samples, s)
	p.mu.Unlock()
	return s.OK
}

// Stop ends the probing: a target with fewer than MinSamples successful
// probes is probed again, one probe after the other, until it has them,
// 2×MinSamples of these top-up probes failed, or TopUpTimeout passed for
// all targets together (no top-up once Start's context ended: an
// interrupted run ends at once). It returns every sample in the order they
// were taken.
func (p *Prober) Stop() []Sample {
	p.cancel()
	p.loop.Wait()
	p.probes.Wait()
	ctx, cancel := context.WithTimeout(p.parent, TopUpTimeout)
	defer cancel()
	for i := range p.o.Targets {
		for ok, failed := p.successes(i), 0; ok < MinSamples && failed < 2*MinSamples && ctx.Err() == nil; {
			if p.probe(ctx, i) {
				ok++
			} else {
				failed++
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.samples
	// Probes run concurrently and record as they end: order them by start.
	slices.SortStableFunc(out, func(a, b Sample) int { return cmp.Compare(a.AtNs, b.AtNs) })
	return out
}

// successes counts target i's successful probes.
func (p *Prober) successes(i int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, s := range p.samples {
		if s.OK && s.Target == p.o.Targets[i] {
			n++
		}
	}
	return n
}

// Mean is the mean RTT of the successful samples, in ns; false when none
// succeeded.
func Mean(samples []Sample) (int64, bool) {
	var sum, n int64
	for _, s := range samples {
		if s.OK {
			sum += s.RTTNs
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / n, true
}

// TargetRTT is one target's round trip: the mean of its successful probes
// (0 when none succeeded), and how many of its probes succeeded and failed.
type TargetRTT struct {
	Target Target
	RTTNs  int64
	OK     int
	Failed int
}

// MeanByTarget is the round trip of each of targets, in their order, from
// its own samples.
func MeanByTarget(samples []Sample, targets []Target) []TargetRTT {
	out := make([]TargetRTT, len(targets))
	for i, t := range targets {
		var own []Sample
		for _, s := range samples {
			if s.Target == t {
				own = append(own, s)
			}
		}
		out[i].Target = t
		out[i].RTTNs, _ = Mean(own)
		for _, s := range own {
			if s.OK {
				out[i].OK++
			} else {
				out[i].Failed++
			}
		}
	}
	return out
}
