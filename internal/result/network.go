package result

import "github.com/aiperf-go/aiperf/internal/netrtt"

// Sources of Network.RTTNs.
const (
	NetworkProbes = "probes" // --network-latency-automatic: the mean of the successful probes
	NetworkGiven  = "given"  // --network-latency-mean
)

// Network is a run's network calibration (--network-latency-*): the round
// trip the network_adjusted_ metrics subtract and, when it was measured,
// every probe (profile_export_network_latency.jsonl).
type Network struct {
	RTTNs   int64           `json:"rtt_ns"` // 0: none (no probe succeeded)
	Source  string          `json:"source"` // NetworkProbes or NetworkGiven
	Samples []netrtt.Sample `json:"samples,omitempty"`
}
