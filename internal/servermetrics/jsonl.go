package servermetrics

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// ErrNoSamples is returned by the time-series exports of a Result that
// holds no samples: one read back from JSON rather than returned by Stop.
var ErrNoSamples = errors.New("no retained samples: the time series is only available in the collecting process")

// WriteJSONL writes AIPerf's server_metrics_export.jsonl: one line per
// retained scrape of each server endpoint, warmup included, as AIPerf's
// slim records — endpoint_url, timestamp_ns (wall clock), endpoint_latency_ns
// and metrics, each family (by AIPerfName) a list of samples,
// {"labels", "value"} or, for a histogram, {"labels", "buckets" (cumulative),
// "sum", "count"}. Summaries are left out, as AIPerf does.
func WriteJSONL(w io.Writer, r *Result, m Meta) error {
	if r.timeline == nil {
		return ErrNoSamples
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for ei, b := range r.timeline.endpoints {
		if r.Endpoints[ei].Source != SourceServer {
			continue
		}
		for i, t := range b.times {
			line := object{{"endpoint_url", r.Endpoints[ei].URL}, {"timestamp_ns", m.wall(t)},
				{"endpoint_latency_ns", b.latency[i]}, {"metrics", scrapeMetrics(b, i)}}
			if err := enc.Encode(line); err != nil {
				return fmt.Errorf("write server metrics JSONL: %w", err)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write server metrics JSONL: %w", err)
	}
	return nil
}

// scrapeMetrics are the samples of scrape i by family, in name order.
func scrapeMetrics(b *endpointBuf, i int) object {
	byName := map[string][]object{}
	var names []string
	for _, s := range b.order {
		if s.typ == TypeSummary {
			continue
		}
		sample, ok := s.sample(i)
		if !ok {
			continue
		}
		name := s.fam.name
		if byName[name] == nil {
			names = append(names, name)
		}
		byName[name] = append(byName[name], sample)
	}
	slices.Sort(names)
	out := make(object, len(names))
	for k, n := range names {
		out[k] = field{n, byName[n]}
	}
	return out
}

// sample is the series' sample in scrape i as AIPerf writes it.
func (s *seriesBuf) sample(i int) (object, bool) {
	o := object{}
	if len(s.labels) > 0 {
		o = append(o, field{"labels", sortedLabels(s.labels)})
	}
	if s.count == nil {
		if math.IsNaN(s.vals[i]) {
			return nil, false
		}
		return append(o, field{"value", s.vals[i]}), true
	}
	k := s.stride()
	if math.IsNaN(s.count[i]) || len(s.cells) < (i+1)*k {
		return nil, false
	}
	bs := make(object, k)
	for j, le := range s.bounds {
		bs[j] = field{formatLE(le), s.cells[i*k+j]}
	}
	return append(o, field{"buckets", bs}, field{"sum", s.sum[i]}, field{"count", s.count[i]}), true
}
