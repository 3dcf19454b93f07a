package metrics

// SLO is one of AIPerf's --goodput objectives: a request is good when every
// record metric an SLO names has a value that meets it: at most the
// threshold, or at least it for a metric where larger is better (BetterOf).
type SLO struct {
	Tag   string
	Value float64
}

var (
	defGoodput      = def{TagGoodput, "Goodput", UnitRequestsSec}
	defGoodCount    = def{TagGoodRequestCount, "Good Request Count", UnitRequests}
	defGoodFraction = def{TagGoodRequestFraction, "Good Request Fraction", UnitRatio}
)

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
				objs = append(objs, objective{id, o.Value, BetterOf(o.Tag) == Higher})
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
