package metrics

// AIPerf's network latency calibration (--network-latency-automatic,
// --network-latency-mean): the mean network round trip, and the latencies
// that start at the request's send with it taken out.
const (
	TagNetworkRTT             = "network_rtt"
	TagNetworkAdjustedLatency = "network_adjusted_request_latency"
	TagNetworkAdjustedTTFT    = "network_adjusted_time_to_first_token"
	TagNetworkAdjustedTTFO    = "network_adjusted_time_to_first_output_token"
)

var defNetworkRTT = def{TagNetworkRTT, "Network RTT", UnitMs}

// networkAdjusted are the derived distributions of AdjustForNetwork and
// the metric each shifts: those whose interval starts at the send (TTST,
// ITL and ICL are gaps within the stream, the round trip not in them).
var networkAdjusted = [...]struct {
	def
	source string
}{
	{def{TagNetworkAdjustedTTFT, "Network-Adjusted Time to First Token", UnitMs}, TagTTFT},
	{def{TagNetworkAdjustedTTFO, "Network-Adjusted Time to First Output Token", UnitMs}, TagTTFO},
	{def{TagNetworkAdjustedLatency, "Network-Adjusted Request Latency", UnitMs}, TagRequestLatency},
}

// AdjustForNetwork adds AIPerf's network calibration to s: network_rtt
// (rttNs, in ms) and, for each of TTFT, TTFO and request latency that s
// has, its network_adjusted_ copy right after it, every statistic less the
// RTT and clamped at 0, the standard deviation and count unchanged (a
// constant shifts a distribution and not its spread), the sum the new
// mean's. The raw metrics are left as they are. It returns the adjusted
// metrics whose minimum was below the RTT (clamped), for a warning; a
// zero RTT adds nothing, as AIPerf.
func AdjustForNetwork(s *Summary, rttNs int64) (clamped []string) {
	if rttNs <= 0 {
		return nil
	}
	rtt := ms(rttNs)
	out := make([]Metric, 0, len(s.Metrics)+len(networkAdjusted)+1)
	for _, m := range s.Metrics {
		out = append(out, m)
		for _, a := range networkAdjusted {
			if m.Tag != a.source || m.Stats == nil {
				continue
			}
			st := *m.Stats
			for _, x := range []*float64{&st.Avg, &st.Min, &st.Max, &st.P1, &st.P5, &st.P10, &st.P25, &st.P50, &st.P75,
				&st.P90, &st.P95, &st.P99} {
				*x = max(0, *x-rtt)
			}
			st.Sum = st.Avg * float64(st.Count)
			if m.Stats.Min < rtt {
				clamped = append(clamped, a.tag)
			}
			out = append(out, Metric{Tag: a.tag, Header: a.header, Unit: a.unit, Stats: &st})
		}
	}
	s.Metrics = append(out, Metric{Tag: defNetworkRTT.tag, Header: defNetworkRTT.header, Unit: defNetworkRTT.unit, Value: rtt})
	return clamped
}
