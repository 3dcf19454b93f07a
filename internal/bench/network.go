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

// probed stops the probing and keeps the run's round trip: the probes'
// mean, or --network-latency-mean's.
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
// the profiling summary, with a warning where the round trip is more than
// some requests' latency (their adjusted values are 0).
func (c *cell) adjustForNetwork() {
	n := c.run.Network
	if n == nil || n.RTTNs <= 0 {
		return
	}
	if clamped := metrics.AdjustForNetwork(&c.run.Profiling, n.RTTNs); len(clamped) > 0 {
		c.warnings = append(c.warnings, fmt.Sprintf("network_rtt (%.3f ms) is more than the least of the raw latencies of %s: "+
			"their statistics below it are 0 (the round trip measured may be longer than those requests' network leg)",
			float64(n.RTTNs)/1e6, strings.Join(clamped, ", ")))
	}
}
