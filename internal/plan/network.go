package plan

import (
	"fmt"
	"time"
)

// Bounds of --network-latency-ping-interval, in seconds.
const (
	minPingInterval = 0.01
	maxPingInterval = 3600.0
)

// NetworkRTT is the run's network calibration: probe (automatic, every
// Interval), or a given mean (MeanNs), or neither (Off).
type NetworkRTT struct {
	Probe    bool
	Interval time.Duration
	MeanNs   int64
}

// Off reports whether the run does no network calibration.
func (n NetworkRTT) Off() bool { return !n.Probe && n.MeanNs <= 0 }

// Network is the resolved --network-latency-* configuration.
func (p *Profile) Network() NetworkRTT {
	n := NetworkRTT{Probe: p.NetworkLatencyAutomatic, Interval: time.Second}
	if x := p.NetworkLatencyPingInterval; x != nil {
		n.Interval = time.Duration(*x * float64(time.Second))
	}
	if x := p.NetworkLatencyMean; x != nil {
		n.MeanNs = int64(*x * 1e6)
	}
	return n
}

// network checks the --network-latency-* options.
func (v *validator) network(p *Profile) {
	v.check(!(p.NetworkLatencyAutomatic && p.NetworkLatencyMean != nil), "network_latency_mean",
		"cannot be used with --network-latency-automatic: give a mean, or let it be measured")
	if x := p.NetworkLatencyMean; x != nil && !v.nonFinite["network_latency_mean"] {
		v.check(*x >= 0 && *x <= MaxSeconds*1e3, "network_latency_mean", fmt.Sprintf("must be a round trip in ms, 0 or more, got %g", *x))
	}
	if x := p.NetworkLatencyPingInterval; x != nil && !v.nonFinite["network_latency_ping_interval"] {
		v.check(*x >= minPingInterval && *x <= maxPingInterval, "network_latency_ping_interval",
			fmt.Sprintf("must be between %g and %g seconds, got %g", minPingInterval, maxPingInterval, *x))
		v.check(p.NetworkLatencyAutomatic, "network_latency_ping_interval", "needs --network-latency-automatic")
	}
}
