package shard

// Sample is one ping of a worker's clock: T0 the coordinator's wall time
// when it sent the ping, TW the worker's when it answered, T1 the
// coordinator's when the answer arrived (Unix ns).
type Sample struct{ T0, TW, T1 int64 }

// RTT is the ping's round trip.
func (s Sample) RTT() int64 { return s.T1 - s.T0 }

// Offset is the worker's clock minus the coordinator's, taking the
// worker's reading as made halfway through the round trip.
func (s Sample) Offset() int64 { return s.TW - (s.T0 + (s.T1-s.T0)/2) }

// Sync is a worker's clock as the coordinator measured it.
type Sync struct {
	OffsetNs int64 `json:"offset_ns"` // worker wall − coordinator wall
	RTTNs    int64 `json:"rtt_ns"`    // of the sample it rests on
	Samples  int   `json:"samples"`
}

// Estimate takes the offset of the sample with the shortest round trip:
// its error is at most half that round trip, and the least delayed by
// scheduling. It needs at least one sample.
func Estimate(samples []Sample) Sync {
	best := samples[0]
	for _, s := range samples[1:] {
		if s.RTT() < best.RTT() {
			best = s
		}
	}
	return Sync{OffsetNs: best.Offset(), RTTNs: best.RTT(), Samples: len(samples)}
}
