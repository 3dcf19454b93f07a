package metrics

// SLO is one of AIPerf's --goodput objectives: a request is good when every
// record metric an SLO names has a value that meets it: at least the
// threshold for a metric AIPerf flags LARGER_IS_BETTER (LargerIsBetter),
// at most it for any other.
type SLO struct {
	Tag   string
	Value float64
}

var (
	defGoodput      = def{TagGoodput, "Goodput", UnitRequestsSec}
	defGoodCount    = def{TagGoodRequestCount, "Good Request Count", UnitRequests}
	defGoodFraction = def{TagGoodRequestFraction, "GoodRequestFraction", UnitRatio} // AIPerf's header, as it spells it
)

// largerIsBetter are the record metrics AIPerf flags
// MetricFlags.LARGER_IS_BETTER. Its GoodRequestCountMetric judges an SLO by
// that flag alone: value ≥ threshold with it, value ≤ threshold without
// (also for the metrics where neither way is better). One exception, ours
// and documented (docs/aiperf-compatibility.md): image_throughput, a
// throughput AIPerf does not flag, is a floor too. This is not compare's
// direction (BetterOf), which calls plain token counts neither.
var largerIsBetter = map[string]bool{
	TagImageThroughput:         true, // not flagged by AIPerf: see above
	TagPerUserThroughput:       true,
	TagFullPerUser:             true,
	TagE2EOutputThroughput:     true,
	TagPrefillPerUser:          true,
	TagOSL:                     true,
	TagISL:                     true,
	TagOutputTokenCount:        true,
	TagReasoningTokenCount:     true,
	TagUsagePromptTokens:       true,
	TagUsageCacheReadTokens:    true,
	TagUsageCompletionTokens:   true,
	TagUsageReasoningTokens:    true,
	TagUsageAcceptedPrediction: true,
	TagUsageTotalTokens:        true,
	TagSpecAcceptanceLength:    true,
	TagSpecDraftAcceptanceRate: true,
	TagSpecAcceptedPerVerified: true,
	TagRTFX:                    true,
}

// LargerIsBetter reports whether AIPerf flags the record metric tag
// LARGER_IS_BETTER (or it is image_throughput): an SLO on it is a floor (a
// request meets it with a value at least the threshold); on any other
// metric an SLO is a ceiling.
func LargerIsBetter(tag string) bool { return largerIsBetter[tag] }

// GoodputTags are the metrics an SLO can name, in display order: every
// record metric (one value per successful request), but
// inter_chunk_latency, which has one value per gap of a stream, and
// error_isl, which only a failed request has (and only a successful
// request can be good).
func GoodputTags() []string {
	out := make([]string, 0, len(recordDefs))
	for id, d := range recordDefs {
		if id != idICL && id != idErrorISL {
			out = append(out, d.tag)
		}
	}
	return out
}

// goodRequests counts the successful, not cancelled records that meet
// every SLO; a record without a value of a metric an SLO names (no TTFT
// when not streaming, no ITL with one output token) is not good.
func goodRequests(records []Record, streaming bool, slos []SLO) int {
	type objective struct {
		id     int
		value  float64
		larger bool
	}
	var objs []objective
	for _, o := range slos {
		for id, d := range recordDefs {
			if d.tag == o.Tag {
				objs = append(objs, objective{id, o.Value, LargerIsBetter(o.Tag)})
			}
		}
	}
	if len(objs) < len(slos) {
		return 0 // an SLO names no record metric: nothing meets it
	}
	var (
		vals [numRecordMetrics]float64
		seen [numRecordMetrics]bool
		good int
	)
	emit := func(id int, v float64) { vals[id], seen[id] = v, true }
	for i := range records {
		r := &records[i]
		if r.Cancelled || !r.OK() {
			continue
		}
		clear(seen[:])
		visit(r, streaming, false, emit)
		ok := true
		for _, o := range objs {
			v := vals[o.id]
			if !seen[o.id] || o.larger && v < o.value || !o.larger && v > o.value {
				ok = false
				break
			}
		}
		if ok {
			good++
		}
	}
	return good
}

// addGoodput appends goodput, good_request_count and good_request_fraction
// as AIPerf derives them: good requests per second of the benchmark, and
// of every request attempted (successful or failed).
func addGoodput(s *Summary, good, attempted int, duration float64) {
	if duration > 0 {
		s.Metrics = append(s.Metrics, Metric{Tag: defGoodput.tag, Header: defGoodput.header, Unit: defGoodput.unit,
			Value: float64(good) / duration})
	}
	s.Metrics = append(s.Metrics, Metric{Tag: defGoodCount.tag, Header: defGoodCount.header, Unit: defGoodCount.unit,
		Value: float64(good)})
	fraction := 0.0
	if attempted > 0 {
		fraction = float64(good) / float64(attempted)
	}
	s.Metrics = append(s.Metrics, Metric{Tag: defGoodFraction.tag, Header: defGoodFraction.header,
		Unit: defGoodFraction.unit, Value: fraction})
}
