package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/netrtt"
	"github.com/aiperf-go/aiperf/internal/result"
)

// probeNetwork starts measuring the network round trip to the servers
// while the load runs (--network-latency-automatic); nil when not asked.
func (c *cell) probeNetwork(ctx context.Context) *netrtt.Prober {
	n := c.p.Network()
	if !n.Probe {
		return nil
	}
	return netrtt.Start(ctx, netrtt.Options{Targets: netrtt.Targets(c.p.URL), Interval: n.Interval, Now: c.clock.Now})
}

// probed stops the probing and keeps the run's round trip: the probes
// (each server's mean is taken when the latencies are adjusted), or
// --network-latency-mean's.
func (c *cell) probed(p *netrtt.Prober) {
	n := c.p.Network()
	switch {
	case p != nil:
		samples := p.Stop()
		for i := range samples {
			samples[i].WallNs = c.clock.Wall(samples[i].AtNs)
		}
		mean, ok := netrtt.Mean(samples)
		c.run.Network = &result.Network{RTTNs: mean, Source: result.NetworkProbes, Samples: samples}
		if !ok {
			c.warnings = append(c.warnings, fmt.Sprintf("--network-latency-automatic: none of the %d probes of the servers' "+
				"TCP handshake succeeded: the latencies are not network-adjusted (profile_export_network_latency.jsonl says why)",
				len(samples)))
		}
	case n.MeanNs > 0:
		c.run.Network = &result.Network{RTTNs: n.MeanNs, Source: result.NetworkGiven}
	}
}

// adjustForNetwork adds network_rtt and the network-adjusted latencies to
// the profiling summary: each request less its own server's round trip
// (the mean of that host:port's probes; --network-latency-mean for all).
// The run's RTT becomes the mean taken out. The audit says which round
// trip went with which server when there are several, which server had
// none (its requests are left out), and which metrics some request's
// round trip floored at 0.
func (c *cell) adjustForNetwork() {
	n := c.run.Network
	if n == nil || n.RTTNs <= 0 {
		return
	}
	rttOf := func(*metrics.Record) int64 { return n.RTTNs }
	if n.Source == result.NetworkProbes {
		targets, of := netrtt.TargetsOf(c.p.URL)
		rtts := netrtt.MeanByTarget(n.Samples, targets)
		byURL := make([]int64, len(of))
		for i, t := range of {
			if t >= 0 {
				byURL[i] = rtts[t].RTTNs
			}
		}
		rttOf = func(r *metrics.Record) int64 {
			if r.URL < 0 || r.URL >= len(byURL) {
				return 0
			}
			return byURL[r.URL]
		}
		if w := perOrigin(rtts); w != "" {
			c.warnings = append(c.warnings, w)
		}
	}
	prof, _ := byKind(c.run.Records)
	adj := metrics.AdjustForNetwork(&c.run.Profiling, prof, c.p.Streaming, rttOf, n.RTTNs)
	n.RTTNs = adj.MeanRTTNs
	if adj.Left > 0 {
		c.warnings = append(c.warnings, fmt.Sprintf("network_adjusted_*: %d successful requests went to a server with no "+
			"successful probe and are left out of them (their raw latencies are in the other metrics)", adj.Left))
	}
	if len(adj.Clamped) > 0 {
		c.warnings = append(c.warnings, fmt.Sprintf("the network round trip is more than some requests' raw latency in "+
			"%s: those requests count 0 there (the round trip measured may be longer than those requests' network leg)",
			strings.Join(adj.Clamped, ", ")))
	}
}

// perOrigin says which round trip went with which server, when there are
// several, and which had none; "" for one server that had one.
func perOrigin(rtts []netrtt.TargetRTT) string {
	if len(rtts) == 1 && rtts[0].OK > 0 {
		return ""
	}
	parts := make([]string, len(rtts))
	for i, t := range rtts {
		if t.OK == 0 {
			parts[i] = fmt.Sprintf("%s none (%d probes failed)", t.Target.URL, t.Failed)
			continue
		}
		parts[i] = fmt.Sprintf("%s %.3f ms (%d probes)", t.Target.URL, float64(t.RTTNs)/1e6, t.OK)
	}
	return "network_rtt per server, each taken out of its own requests' latencies: " + strings.Join(parts, ", ") +
		"; network_rtt is their mean over the requests adjusted"
}
