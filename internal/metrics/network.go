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
// the record metric each shifts: those whose interval starts at the send
// (TTST, ITL and ICL are gaps within the stream, the round trip not in
// them).
var networkAdjusted = [...]struct {
	def
	source int
}{
	{def{TagNetworkAdjustedTTFT, "Network-Adjusted Time to First Token", UnitMs}, idTTFT},
	{def{TagNetworkAdjustedTTFO, "Network-Adjusted Time to First Output Token", UnitMs}, idTTFO},
	{def{TagNetworkAdjustedLatency, "Network-Adjusted Request Latency", UnitMs}, idLatency},
}

// NetworkAdjustment is what AdjustForNetwork did: the mean round trip it
// took out (ns, over the requests adjusted), the adjusted metrics where
// some request's raw value was below its round trip (read 0 there), and
// how many successful requests had no round trip to take out (left out of
// the adjusted metrics).
type NetworkAdjustment struct {
	MeanRTTNs int64
	Clamped   []string
	Left      int
}

// AdjustForNetwork adds AIPerf's network calibration to s, the summary of
// records: for each of TTFT, TTFO and request latency that s has, its
// network_adjusted_ copy right after it, the statistics of every
// successful request's value less its own round trip, rttOf(r) in ns,
// floored at 0 (a request whose rttOf is 0 or less is left out; a metric
// that is its source shifted by one round trip keeps the source's standard
// deviation exactly rather than a rounding of it); then
// network_rtt, the mean round trip taken out, in ms (fallbackNs when no
// request was adjusted). The raw metrics are left as they are. Nothing is
// added when there is no round trip at all, as AIPerf adds nothing for a
// zero RTT.
func AdjustForNetwork(s *Summary, records []Record, streaming bool, rttOf func(*Record) int64,
	fallbackNs int64) NetworkAdjustment {
	var (
		adj     NetworkAdjustment
		vals    [len(networkAdjusted)][]float64
		clamped [len(networkAdjusted)]bool
		rttSum  float64
		n       int
		first   int64
		uniform = true // every request adjusted by the same round trip
	)
	for i := range records {
		r := &records[i]
		if r.Cancelled || !r.OK() {
			continue
		}
		rttNs := rttOf(r)
		if rttNs <= 0 {
			adj.Left++
			continue
		}
		if n == 0 {
			first = rttNs
		}
		uniform = uniform && rttNs == first
		rtt := ms(rttNs)
		rttSum += float64(rttNs)
		n++
		visit(r, streaming, false, func(id int, v float64) {
			for k, a := range networkAdjusted {
				if a.source == id {
					vals[k] = append(vals[k], max(0, v-rtt))
					clamped[k] = clamped[k] || v < rtt
				}
			}
		})
	}
	switch {
	case n > 0:
		adj.MeanRTTNs = int64(rttSum / float64(n))
	case fallbackNs > 0:
		adj.MeanRTTNs = fallbackNs
	default:
		return adj
	}
	out := make([]Metric, 0, len(s.Metrics)+len(networkAdjusted)+1)
	for _, m := range s.Metrics {
		out = append(out, m)
		for k, a := range networkAdjusted {
			if m.Tag != recordDefs[a.source].tag || m.Stats == nil || len(vals[k]) == 0 {
				continue
			}
			st := Compute(vals[k])
			if !st.finite() {
				continue
			}
			if uniform && !clamped[k] && st.Count == m.Stats.Count {
				st.Std = m.Stats.Std // the source shifted: its spread exactly, not a rounding of it
			}
			if clamped[k] {
				adj.Clamped = append(adj.Clamped, a.tag)
			}
			out = append(out, Metric{Tag: a.tag, Header: a.header, Unit: a.unit, Stats: &st})
		}
	}
	s.Metrics = append(out, Metric{Tag: defNetworkRTT.tag, Header: defNetworkRTT.header, Unit: defNetworkRTT.unit,
		Value: ms(adj.MeanRTTNs)})
	return adj
}
